#!/usr/bin/env bash
# Build the Linux one-folder app with PyInstaller and wrap it as a .tar.gz and a .deb.
# Usage: packaging/build_linux.sh [PYTHON]   (called by `make package`; PYTHON defaults to .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
VERSION=$("$PY" -c 'import crewagent; print(crewagent.__version__)')
ARCH=$(dpkg --print-architecture 2>/dev/null || uname -m)
NAME="crewagent-desktop-${VERSION}-linux-$(uname -m)"
DIST=dist
BUILD=build/pyinstaller

rm -rf "$DIST/crewagent" "$BUILD"
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST" --workpath "$BUILD" packaging/crewagent.spec

# .tar.gz: the one-folder app under a versioned top folder, with the icon and desktop file.
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/$NAME"
cp -a "$DIST/crewagent/." "$STAGE/$NAME/"
cp packaging/crewagent.desktop "$STAGE/$NAME/"
cp packaging/icons/hicolor/256x256/apps/crewagent.png "$STAGE/$NAME/crewagent.png"
tar -C "$STAGE" -czf "$DIST/$NAME.tar.gz" "$NAME"

# .deb: /opt/crewagent + /usr/bin/crewagent + desktop entry + icons.
ROOT="$STAGE/deb"
mkdir -p "$ROOT/DEBIAN" "$ROOT/opt/crewagent" "$ROOT/usr/bin" "$ROOT/usr/share/applications"
cp -a "$DIST/crewagent/." "$ROOT/opt/crewagent/"
ln -s /opt/crewagent/crewagent "$ROOT/usr/bin/crewagent"
cp packaging/crewagent.desktop "$ROOT/usr/share/applications/crewagent.desktop"
mkdir -p "$ROOT/usr/share/icons" && cp -a packaging/icons/hicolor "$ROOT/usr/share/icons/"
SIZE_KB=$(du -sk "$ROOT" | cut -f1)
cat > "$ROOT/DEBIAN/control" <<CONTROL
Package: crewagent-desktop
Version: ${VERSION}
Architecture: ${ARCH}
Maintainer: CrewAgent Desktop team <crewagent@localhost>
Installed-Size: ${SIZE_KB}
Depends: libc6, libglib2.0-0, libfontconfig1, libxkbcommon0, libxkbcommon-x11-0, libxcb-cursor0, libegl1, libdbus-1-3
Section: devel
Priority: optional
Homepage: https://github.com/crewagent/crewagent-desktop
Description: Desktop workbench for LLM agents
 Open a project folder and work with a model in Chat, Agent and Run modes that
 share one protocol-complete, crash-safe conversation log. Includes an offline
 demo provider.
CONTROL
dpkg-deb --root-owner-group --build "$ROOT" "$DIST/crewagent-desktop_${VERSION}_${ARCH}.deb" >/dev/null

echo "built:"
du -sh "$DIST/crewagent" "$DIST/$NAME.tar.gz" "$DIST/crewagent-desktop_${VERSION}_${ARCH}.deb"
