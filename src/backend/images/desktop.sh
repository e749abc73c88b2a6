# desktop.sh: the "desktop" guest: everything in "tools" plus an X session on
# the emulated display (-vga std, bochs-drm + Xorg modesetting, 1920x1080),
# the jwm window manager, an xterm, the usb-tablet as absolute pointer
# (udev + libinput) and the GUI programs openscad and librecad. The init
# starts it all without a display manager.
. "$(dirname "$0")/common.sh"

start_build
get_kernel
initramfs_base $ROOT_MODULES bochs xhci_pci usbhid hid_generic evdev
pack_initramfs
debian_root "$B/root" $TOOLS_PACKAGES xserver-xorg-core \
	xserver-xorg-input-libinput xfonts-base fonts-dejavu-core \
	x11-xserver-utils x11-utils jwm xterm librecad
mkdir -p "$B/root/etc/engi" "$B/root/etc/X11"
cp "$HERE/desktop-session" "$B/root/etc/engi/desktop"
chmod 755 "$B/root/etc/engi/desktop"
cp "$HERE/xorg.conf" "$B/root/etc/X11/xorg.conf"
# jwm's default configuration includes a menu made by the absent "menu" package.
printf '<?xml version="1.0"?>\n<JWM>\n</JWM>\n' >"$B/root/etc/jwm/debian-menu"
make_disk "$B/root" 2048
# ready when the window manager manages the terminal's window: X has set
# the mode and drawn, not only started (the BIOS text screen also looks
# settled to a screen check)
READY_COMMAND='test -S /tmp/.X11-unix/X0 && DISPLAY=:0 xprop -root _NET_CLIENT_LIST | grep -q window && sleep 2'
write_json desktop \
	"console=ttyS0 quiet panic=-1 root=/dev/vda video=Virtual-1:1920x1080" \
	2048 true $TOOLS_PROGRAMS librecad xterm
publish
