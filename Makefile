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
# make install [PREFIX=/usr/local] [DESTDIR=...]
PREFIX ?= /usr/local
install:
	swift build -c release --product orb-player
	install -Dm755 .build/release/orb-player $(DESTDIR)$(PREFIX)/bin/orb-player
	install -Dm644 data/org.orb.Player.desktop $(DESTDIR)$(PREFIX)/share/applications/org.orb.Player.desktop
	install -Dm644 data/org.orb.Player.svg $(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps/org.orb.Player.svg
	install -Dm644 data/org.orb.Player.metainfo.xml $(DESTDIR)$(PREFIX)/share/metainfo/org.orb.Player.metainfo.xml
	-[ -z "$(DESTDIR)" ] && update-desktop-database -q $(PREFIX)/share/applications 2>/dev/null || true

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/orb-player $(DESTDIR)$(PREFIX)/share/applications/org.orb.Player.desktop \
	  $(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps/org.orb.Player.svg \
	  $(DESTDIR)$(PREFIX)/share/metainfo/org.orb.Player.metainfo.xml
