# common.sh: helpers shared by the guest image recipes (sourced, never run).
#
# A recipe is run as `/bin/sh RECIPE.sh OUTDIR` by root. It builds everything
# in OUTDIR/.build and moves vmlinuz, initrd.img, disk.qcow2 and image.json
# into OUTDIR only when all of them are made. Downloaded .deb files are kept
# in $ENGI_IMAGE_DOWNLOADS (default: inside the build folder) for later builds.
# Every package comes from the host's configured Debian (bookworm) archive.

set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
B=$OUT/.build
DL=${ENGI_IMAGE_DOWNLOADS:-$B/downloads}
DEBS=$DL/debs
MIRROR=http://deb.debian.org/debian
SUITE=bookworm
FINAL="vmlinuz initrd.img disk.qcow2 image.json"

export LC_ALL=C DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export SOURCE_DATE_EPOCH=0
APT="apt-get -q -o APT::Sandbox::User=root -o Acquire::Languages=none"

log() { echo "[image] $*" >&2; }

finish() {
	rc=$?
	rm -rf "$B"
	if [ $rc -ne 0 ]; then
		for f in $FINAL; do rm -f "$OUT/$f"; done
		log "failed (exit $rc)"
	fi
	exit $rc
}

start_build() {
	for f in $FINAL; do rm -f "$OUT/$f"; done
	rm -rf "$B"
	mkdir -p "$B/out" "$DEBS"
	trap finish EXIT
	trap 'exit 130' INT TERM HUP
	: >"$B/packages"
}

# fetch PKG...: put the candidate .deb of each package into $DEBS (reusing
# files already there, checked against the archive's SHA256) and print the
# paths of the files.
fetch() {
	$APT download --print-uris "$@" >"$B/uris"
	missing=
	while read -r uri file size sum; do
		f=$DEBS/$file
		if [ -s "$f" ] && [ "$(sha256sum <"$f" | cut -d' ' -f1)" = "${sum#SHA256:}" ]; then
			continue
		fi
		missing="$missing ${file%%_*}"
	done <"$B/uris"
	if [ -n "$missing" ]; then
		(cd "$DEBS" && $APT download $missing >&2)
	fi
	while read -r uri file size sum; do
		echo "$DEBS/$file"
	done <"$B/uris"
}

# record DEB...: note package name and version for image.json.
record() {
	for d; do
		dpkg-deb -f "$d" Package Version |
			awk '/^Package:/{p=$2} /^Version:/{print p, $2}' >>"$B/packages"
	done
}

# libclosure PKG...: the packages plus the lib* packages they depend on.
libclosure() {
	todo="$*"
	seen=" "
	while [ -n "$todo" ]; do
		set -- $todo
		todo=
		for p; do
			case "$seen" in *" $p "*) continue ;; esac
			seen="$seen$p "
			todo="$todo $(apt-cache depends --no-recommends --no-suggests \
				--no-conflicts --no-breaks --no-replaces --no-enhances "$p" |
				awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 ~ /^lib/ {print $2}')"
		done
	done
	echo $seen
}

# get_kernel: unpack Debian's current kernel into $B/kernel, set KVER, KDIR
# and copy the bzImage to $B/out/vmlinuz.
get_kernel() {
	kpkg=$(apt-cache depends linux-image-amd64 |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
	[ -n "$kpkg" ] || { log "no kernel package found"; return 1; }
	deb=$(fetch "$kpkg")
	record "$deb"
	mkdir -p "$B/kernel"
	dpkg-deb -x "$deb" "$B/kernel"
	KVER=${kpkg#linux-image-}
	KDIR=$B/kernel/lib/modules/$KVER
	cp "$B/kernel/boot/vmlinuz-$KVER" "$B/out/vmlinuz"
	depmod -b "$B/kernel" "$KVER"
}

# modorder MODULE...: the .ko files (relative to $KDIR) that load MODULEs,
# dependencies first, each once.
modorder() {
	awk -v want="$*" '
	function name(p) { sub(/.*\//, "", p); sub(/\.ko.*$/, "", p); gsub(/-/, "_", p); return p }
	function load(p,  d, n, i) {
		if (p in done) return
		done[p] = 1
		n = split(dep[p], d, " ")
		for (i = 1; i <= n; i++) load(d[i])
		print p
	}
	{ p = $1; sub(/:$/, "", p); path[name(p)] = p; sub(/^[^:]*:/, ""); dep[p] = $0 }
	END {
		n = split(want, w, " ")
		for (i = 1; i <= n; i++) {
			m = w[i]; gsub(/-/, "_", m)
			if (!(m in path)) { print "no module " m > "/dev/stderr"; exit 1 }
			load(path[m])
		}
	}' "$KDIR/modules.dep"
}

# initramfs_base MODULE...: start $B/initramfs with busybox, the init script
# and the modules (listed in load order in /lib/modules/load.list).
initramfs_base() {
	I=$B/initramfs
	deb=$(fetch busybox-static)
	record "$deb"
	mkdir -p "$B/busybox" "$I/bin" "$I/lib/modules"
	dpkg-deb -x "$deb" "$B/busybox"
	cp "$B/busybox/bin/busybox" "$I/bin/busybox"
	for a in $("$I/bin/busybox" --list-full); do
		mkdir -p "$I/${a%/*}"
		[ -e "$I/$a" ] || ln -s /bin/busybox "$I/$a"
	done
	for d in dev proc sys run tmp work newroot etc var; do mkdir -p "$I/$d"; done
	ln -s /run "$I/var/run"
	cp "$HERE/initramfs-init" "$I/init"
	chmod 755 "$I/init"
	modorder "$@" >"$B/modlist"
	: >"$I/lib/modules/load.list"
	while read -r m; do
		cp "$KDIR/$m" "$I/lib/modules/"
		echo "${m##*/}" >>"$I/lib/modules/load.list"
	done <"$B/modlist"
}

# pack_initramfs: $B/initramfs -> $B/out/initrd.img (newc cpio, zstd).
pack_initramfs() {
	find "$B/initramfs" -exec touch -h -d @0 {} +
	(cd "$B/initramfs" && find . | sort | cpio -o -H newc -R 0:0 --reproducible --quiet) |
		zstd -q -19 -T0 >"$B/out/initrd.img"
}

# make_disk DIR EXTRA_MB: ext4 image of DIR with EXTRA_MB free -> disk.qcow2
make_disk() {
	used=$(du -sm "$1" | cut -f1)
	size=$((used + used / 5 + $2))
	truncate -s "${size}M" "$B/disk.raw"
	E2FSPROGS_FAKE_TIME=1 mkfs.ext4 -q -F -L root -m 0 \
		-U 5e6b1a6e-0000-4000-8000-000000000001 \
		-E hash_seed=5e6b1a6e-0000-4000-8000-000000000002,root_owner=0:0 \
		-d "$1" "$B/disk.raw"
	qemu-img convert -f raw -O qcow2 "$B/disk.raw" "$B/out/disk.qcow2"
	rm -f "$B/disk.raw"
}

# write_json NAME APPEND MEMORY_MB DISPLAY PROGRAM...
write_json() {
	name=$1 append=$2 mem=$3 display=$4
	shift 4
	{
		printf '{\n  "name": "%s",\n  "append": "%s",\n' "$name" "$append"
		printf '  "memory_mb": %s,\n  "cpus": 1,\n  "display": %s,\n' "$mem" "$display"
		# polled through the guest agent until it succeeds before the
		# ready state is saved (no double quotes in it)
		[ -z "${READY_COMMAND:-}" ] || printf '  "ready_command": "%s",\n' "$READY_COMMAND"
		printf '  "programs": ['
		sep=
		for p; do printf '%s"%s"' "$sep" "$p"; sep=", "; done
		printf '],\n  "packages": {'
		sort -u "$B/packages" | awk '{ printf "%s\n    \"%s\": \"%s\"", (NR > 1 ? "," : ""), $1, $2 }'
		printf '\n  }\n}\n'
	} >"$B/out/image.json"
}

# publish: move the finished files into OUTDIR.
publish() {
	for f in $FINAL; do
		[ -s "$B/out/$f" ] || { log "missing $f"; return 1; }
	done
	for f in $FINAL; do mv "$B/out/$f" "$OUT/$f"; done
	log "done: $OUT"
}

# Packages of the engineering images (the desktop adds its own).
TOOLS_PACKAGES="qemu-guest-agent procps python3 python3-numpy openscad calculix-ccx calculix-cgx admesh"
TOOLS_PROGRAMS="openscad ccx cgx admesh python3"
ROOT_MODULES="virtio_pci virtio_console virtio_blk virtio_net crc32c_generic ext4"

# debian_root DIR PKG...: minbase Debian in DIR plus PKGs (no recommends),
# without documentation, apt lists or caches; boots into /sbin/engi-init.
debian_root() {
	R=$1
	shift
	mkdir -p "$DL/debootstrap"
	log "debootstrap"
	debootstrap --variant=minbase --cache-dir="$DL/debootstrap" \
		"$SUITE" "$R" "$MIRROR" >"$B/debootstrap.log" 2>&1 ||
		{ tail -20 "$B/debootstrap.log" >&2; return 1; }
	cat >"$R/etc/apt/sources.list" <<-SOURCES
	deb $MIRROR $SUITE main
	deb $MIRROR $SUITE-updates main
	deb http://deb.debian.org/debian-security $SUITE-security main
	SOURCES
	cat >"$R/etc/dpkg/dpkg.cfg.d/01-engi-nodoc" <<-NODOC
	path-exclude /usr/share/doc/*
	path-exclude /usr/share/man/*
	path-exclude /usr/share/info/*
	path-exclude /usr/share/locale/*
	path-include /usr/share/locale/locale.alias
	NODOC
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	rm -f "$R/etc/resolv.conf"
	cp -L /etc/resolv.conf "$R/etc/resolv.conf"
	for f in "$DEBS"/*.deb; do
		[ -e "$f" ] || continue
		ln -f "$f" "$R/var/cache/apt/archives/" 2>/dev/null ||
			cp "$f" "$R/var/cache/apt/archives/"
	done
	log "apt-get install $*"
	chroot "$R" $APT update >&2
	chroot "$R" $APT -y upgrade >&2
	chroot "$R" $APT -y install --no-install-recommends "$@" >&2
	for f in "$R"/var/cache/apt/archives/*.deb; do
		[ -e "$DEBS/${f##*/}" ] ||
			{ cp "$f" "$DEBS/.part.$$" && mv "$DEBS/.part.$$" "$DEBS/${f##*/}"; }
	done
	chroot "$R" dpkg-query -W -f '${Package} ${Version}\n' >>"$B/packages"

	# The small init and agent loop; busybox supplies hwclock and kill.
	# (util-linux's hwclock waits for an RTC tick, which times out under a
	# busy TCG guest, so the agent's guest-set-time gets busybox's.)
	cp "$B/busybox/bin/busybox" "$R/bin/busybox"
	if [ -e "$R/sbin/hwclock" ]; then
		chroot "$R" dpkg-divert --local --rename --add /sbin/hwclock >&2
	fi
	ln -sf /bin/busybox "$R/sbin/hwclock"
	[ -e "$R/bin/kill" ] || ln -s /bin/busybox "$R/bin/kill"
	cp "$HERE/engi-init" "$R/sbin/engi-init"
	cp "$HERE/engi-agent" "$R/sbin/engi-agent"
	chmod 755 "$R/sbin/engi-init" "$R/sbin/engi-agent"
	mkdir -p "$R/work"
	echo engi >"$R/etc/hostname"

	# Leave no build traces or caches behind.
	chroot "$R" $APT clean
	rm -f "$R/usr/sbin/policy-rc.d" "$R/etc/resolv.conf"
	: >"$R/etc/resolv.conf"
	rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin \
		"$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* \
		"$R"/var/log/* "$R"/var/cache/debconf/*-old "$R"/var/lib/dpkg/*-old \
		"$R"/tmp/* "$R"/root/.cache
	find "$R/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias \
		-exec rm -rf {} + 2>/dev/null || true
}
