#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server; exports FACESEAL_TEST_POSTGRES_URL. Filled in by the storage work.
set -euo pipefail
"$@"
