"""Protocol module of the mock server (see server.py): responses. To be written."""


def matches(method, path):
    """True when this module answers METHOD PATH."""
    return False


def is_main(body):
    """True for a main-agent request (scripted by the scenario), False for a side request."""
    return False


def to_items(body):
    """The request's neutral items, in order: [{"msg", "role", "kind", "value"}] (see compare.py)."""
    return []


def respond(handler, method, url, body, reply):
    """Answer with the neutral REPLY in this protocol's shape (handler.send_json / start_sse / sse)."""
    handler.send_json(501, {"error": {"message": "not implemented"}})
