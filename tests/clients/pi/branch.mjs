// Moves a pi session's leaf back to an earlier entry and leaves a branch summary there, with pi's
// own SessionManager (the package's docs/session-format.md: SessionManager.open, branchWithSummary),
// as /tree does in the interactive client; the next `pi -c` continues from that summary, so the
// session file holds two branches.
// Usage: node branch.mjs PACKAGE_DIR SESSION_FILE ENTRY_ID SUMMARY
import { pathToFileURL } from "node:url";

const [pkg, file, entry, summary] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(`${pkg}/dist/index.js`).href);
const sm = SessionManager.open(file);
sm.branchWithSummary(entry, summary);
