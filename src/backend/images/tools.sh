# tools.sh: the "tools" guest: Debian's kernel, an initramfs that loads the
# virtio and ext4 modules and switch_roots into a minbase Debian root disk
# with qemu-guest-agent, python3 + numpy, openscad, calculix-ccx and -cgx
# and admesh, and the account `user` whose /home/user/Desktop EngiWorld's
# tasks work in. A shell PID 1 (engi-init) keeps the agent running; /work
# is on the disk.
. "$(dirname "$0")/common.sh"

start_build
get_kernel
initramfs_base $ROOT_MODULES
pack_initramfs
debian_root "$B/root" $TOOLS_PACKAGES
chroot "$B/root" useradd --create-home --shell /bin/bash user
make_disk "$B/root" 2048
write_json tools "console=ttyS0 quiet panic=-1 root=/dev/vda" 1024 false $TOOLS_PROGRAMS
publish
