# dist/install.mk - make install / make uninstall: blkiso on this host.
#
#   make install [KVER=RELEASE] [PREFIX=/usr/local] [DESTDIR=...]
#
# The module built for KDIR (default: the running kernel's headers) goes to
# /lib/modules/<release>/updates/blkiso.ko and depmod runs (not with
# DESTDIR: a package runs it).  blkisoctl goes to $(SBINDIR), blkiso-sim
# to $(BINDIR), man pages, bash completion, the systemd unit, the udev
# rules and (if absent) /etc/blkiso/blkiso.conf to where each is looked for.
# install-tools is the same without the module (debian/rules uses it).
PREFIX      ?= /usr/local
SBINDIR     ?= $(PREFIX)/sbin
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR  ?= /etc
UNITDIR     ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR ?= /etc/udev/rules.d
MODINSTDIR  = /lib/modules/$(KREL)/updates

.PHONY: install install-module install-tools uninstall

install: install-module install-tools

install-module: module
	install -D -m 644 $(MODDIR)/blkiso.ko $(DESTDIR)$(MODINSTDIR)/blkiso.ko
	$(if $(DESTDIR),,depmod -a $(KREL))

install-tools: tools
	install -D -m 755 $(B)/tools/blkisoctl $(DESTDIR)$(SBINDIR)/blkisoctl
	install -D -m 755 $(B)/tools/blkiso-sim $(DESTDIR)$(BINDIR)/blkiso-sim
	install -D -m 644 tools/blkisoctl/blkisoctl.8 $(DESTDIR)$(MANDIR)/man8/blkisoctl.8
	install -D -m 644 dist/blkiso.conf.5 $(DESTDIR)$(MANDIR)/man5/blkiso.conf.5
	install -D -m 644 tools/sim/blkiso-sim.1 $(DESTDIR)$(MANDIR)/man1/blkiso-sim.1
	install -D -m 644 tools/blkisoctl/blkisoctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/blkisoctl
	install -D -m 644 dist/60-blkiso.rules $(DESTDIR)$(UDEVRULESDIR)/60-blkiso.rules
	mkdir -p $(DESTDIR)$(UNITDIR)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/blkiso.service.in > $(DESTDIR)$(UNITDIR)/blkiso.service
	chmod 644 $(DESTDIR)$(UNITDIR)/blkiso.service
	test -e $(DESTDIR)$(SYSCONFDIR)/blkiso/blkiso.conf || \
		install -D -m 644 dist/blkiso.conf $(DESTDIR)$(SYSCONFDIR)/blkiso/blkiso.conf

# The configuration file stays: it is the administrator's.
uninstall:
	rm -f $(DESTDIR)$(MODINSTDIR)/blkiso.ko $(DESTDIR)$(SBINDIR)/blkisoctl \
		$(DESTDIR)$(BINDIR)/blkiso-sim $(DESTDIR)$(MANDIR)/man8/blkisoctl.8 \
		$(DESTDIR)$(MANDIR)/man5/blkiso.conf.5 $(DESTDIR)$(MANDIR)/man1/blkiso-sim.1 \
		$(DESTDIR)$(BASHCOMPDIR)/blkisoctl $(DESTDIR)$(UDEVRULESDIR)/60-blkiso.rules \
		$(DESTDIR)$(UNITDIR)/blkiso.service
	$(if $(DESTDIR),,depmod -a $(KREL))
