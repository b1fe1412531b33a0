#!/usr/bin/env bash
# Check a built artifact the way a user would meet it: unpack or install it into a temporary
# place, then run --version, a headless demo chat end to end, and the GUI's --self-test offscreen.
# Usage: packaging/smoke.sh [ARTIFACT]   (.tar.gz, .deb or the one-folder dist/crewagent; default: newest .deb in dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
ARTIFACT=${1:-$(ls -t dist/*.deb 2>/dev/null | head -1)}
[ -n "$ARTIFACT" ] && [ -e "$ARTIFACT" ] || { echo "smoke: no artifact (run make package first)" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
case "$ARTIFACT" in
  *.tar.gz) tar -C "$WORK" -xzf "$ARTIFACT"; BIN=$(ls -d "$WORK"/crewagent-desktop-*/crewagent) ;;
  *.deb)    dpkg-deb -x "$ARTIFACT" "$WORK/root"; BIN="$WORK/root/opt/crewagent/crewagent"
            test -L "$WORK/root/usr/bin/crewagent" && test -f "$WORK/root/usr/share/applications/crewagent.desktop" ;;
  *)        BIN="$ARTIFACT/crewagent" ;;
esac
[ -x "$BIN" ] || { echo "smoke: no executable in $ARTIFACT" >&2; exit 1; }

# A user with nothing configured: fresh data and config folders, no provider variables.
export CREWAGENT_DATA_DIR="$WORK/data" CREWAGENT_CONFIG_DIR="$WORK/config" HOME="$WORK/home"
unset OPENAI_API_KEY OPENAI_BASE_URL CREWAGENT_MODEL
mkdir -p "$HOME" "$WORK/project"
echo "# Smoke test project" > "$WORK/project/README.md"

step() { echo "== $*"; }

step "crewagent --version"
"$BIN" --version | grep -q "^crewagent $("${PYTHON:-python3}" -c 'import re,sys; print(re.search(r"__version__ = \"(.+)\"", open("desktop/crewagent/__init__.py").read()).group(1))')$"

step "crewagent chat --provider demo (end to end)"
"$BIN" chat --project "$WORK/project" --provider demo "list the files" > "$WORK/chat.out" 2> "$WORK/chat.err"
grep -q "README.md" "$WORK/chat.out"
CID=$(head -1 "$WORK/chat.err")
"$BIN" export --project "$WORK/project" --conversation "$CID" --format openai > "$WORK/export.json"
"$BIN" validate "$WORK/export.json" --allow-dotted-names >/dev/null
grep -q '"tool_calls"' "$WORK/export.json"

step "crewagent context (token counting with the bundled offline encoding)"
"$BIN" context --project "$WORK/project" --conversation "$CID" --json > "$WORK/context.json"
grep -q '"tokenCounter": "tiktoken:cl100k_base"' "$WORK/context.json"

step "crewagent gui --self-test (offscreen)"
QT_QPA_PLATFORM=offscreen timeout 120 "$BIN" gui --self-test --project "$WORK/gui-project"

echo "smoke: all checks passed for $ARTIFACT"
