# tiny.sh: the "tiny" guest: Debian's kernel and an initramfs holding only
# busybox and the QEMU guest agent (with the shared libraries it needs). The
# root disk is an empty 64 MiB qcow2 (a diskless guest cannot savevm); /work
# and /tmp are tmpfs.
. "$(dirname "$0")/common.sh"

start_build
get_kernel
initramfs_base virtio_pci virtio_console virtio_net

# The agent and its libraries, taken from Debian packages unpacked here.
S=$B/stage
mkdir -p "$S"
for deb in $(fetch $(libclosure qemu-guest-agent)); do
	dpkg-deb -x "$deb" "$S"
	record "$deb"
done
LIBDIRS=$S/lib/x86_64-linux-gnu:$S/usr/lib/x86_64-linux-gnu
LOADER=$S/lib64/ld-linux-x86-64.so.2
mkdir -p "$I/usr/sbin" "$I/lib64" "$I/lib/x86_64-linux-gnu"
cp "$S/usr/sbin/qemu-ga" "$I/usr/sbin/qemu-ga"
cp -L "$LOADER" "$I/lib64/ld-linux-x86-64.so.2"
"$LOADER" --library-path "$LIBDIRS" --list "$S/usr/sbin/qemu-ga" |
	awk '$2 == "=>" && $3 ~ /^\// {print $3}' >"$B/libs"
while read -r lib; do
	cp -L "$lib" "$I/lib/x86_64-linux-gnu/"
done <"$B/libs"
cp "$HERE/engi-agent" "$I/sbin/engi-agent"
chmod 755 "$I/sbin/engi-agent"
pack_initramfs

qemu-img create -q -f qcow2 "$B/out/disk.qcow2" 64M
write_json tiny "console=ttyS0 quiet panic=-1" 256 false
publish
