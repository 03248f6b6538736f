# write_config CODEX_HOME SCENARIO: Codex's config.toml for a run against the loopback mock
# ($MOCK_URL, lib.sh start_mock): the mock provider over the Responses API, no update check,
# analytics, feedback or telemetry, no retries; the scenario's "config" lines added at the top
# level. Sourced by codex/run.sh, hooks/run.sh and writeback/run.sh.
write_config() { # HOME_DIR SCENARIO
  local dir=$1 scen=$2
  {
    echo "model = \"${CODEX_MODEL:-gpt-5.5}\""
    echo 'model_provider = "mock"'
    echo 'model_reasoning_summary = "auto"'
    echo 'check_for_update_on_startup = false'
    echo 'sandbox_mode = "workspace-write"'
    echo 'approval_policy = "never"'
    jq -r '.config // [] | .[]' "$scen"
    echo '[analytics]'
    echo 'enabled = false'
    echo '[feedback]'
    echo 'enabled = false'
    echo '[otel]'
    echo 'exporter = "none"'
    echo 'trace_exporter = "none"'
    echo 'metrics_exporter = "none"'
    echo '[features]'
    echo 'apply_patch_freeform = true'
    echo '[model_providers.mock]'
    echo 'name = "mock"'
    echo "base_url = \"$MOCK_URL/v1\""
    echo 'wire_api = "responses"'
    echo 'env_key = "MOCK_API_KEY"'
    echo 'request_max_retries = 0'
    echo 'stream_max_retries = 0'
  } > "$dir/config.toml"
}
