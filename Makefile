# The README's commands, by name.
.PHONY: run test bench build shaders format install uninstall

run:
	scripts/run.sh

test:
	scripts/test.sh

bench:
	bench/run.sh

build:
	swift build

shaders:
	scripts/compile-shaders.sh

format:
	swift format --in-place --recursive Package.swift Sources Tests

# Installs the player where a desktop finds it (double-click in the file manager, "Open with"):
# make install [PREFIX=/usr/local] [DESTDIR=...] [BIN=path/to/orb-player]
# BIN installs a binary already built (the tests pass their debug build) instead of building the release one.
# Without DESTDIR (a package's staging root), the prefix's mimeinfo.cache is refreshed for the MIME types.
PREFIX ?= /usr/local
RELEASE_BIN := .build/release/orb-player
BIN ?= $(RELEASE_BIN)
install:
ifeq ($(BIN),$(RELEASE_BIN))
	scripts/build-release.sh >/dev/null
endif
	install -Dm755 "$(BIN)" $(DESTDIR)$(PREFIX)/bin/orb-player
	install -Dm644 data/org.orb.Player.desktop $(DESTDIR)$(PREFIX)/share/applications/org.orb.Player.desktop
	install -Dm644 data/org.orb.Player.svg $(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps/org.orb.Player.svg
	install -Dm644 data/org.orb.Player.metainfo.xml $(DESTDIR)$(PREFIX)/share/metainfo/org.orb.Player.metainfo.xml
	$(update_desktop_database)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/orb-player $(DESTDIR)$(PREFIX)/share/applications/org.orb.Player.desktop \
	  $(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps/org.orb.Player.svg \
	  $(DESTDIR)$(PREFIX)/share/metainfo/org.orb.Player.metainfo.xml
	$(update_desktop_database)

# update-desktop-database is in desktop-file-utils (scripts/setup.sh installs it); without it only the cache is missed.
update_desktop_database = @if [ -z "$(DESTDIR)" ] && command -v update-desktop-database >/dev/null; then \
	  update-desktop-database -q $(PREFIX)/share/applications; fi
