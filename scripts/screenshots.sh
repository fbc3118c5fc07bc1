#!/usr/bin/env bash
# Regenerate the README's screenshots: the browser tests take them (into test-artifacts/screenshots/, never
# into the checkout), then they are copied to docs/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/python -m pytest tests/web/test_web_app_in_a_browser.py tests/web/test_single_sign_on.py \
  tests/web/test_web_app_from_another_origin.py tests/usage/test_usage_charts_in_a_browser.py -q
mkdir -p docs/screenshots
cp test-artifacts/screenshots/*.png docs/screenshots/
echo "docs/screenshots/ updated"
