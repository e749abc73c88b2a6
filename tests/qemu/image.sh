# Builds guest image $1 into the image cache unless it is there (the
# fixture of the qemu tests), and saves its ready state.
. "$ENGI_SRC/tests/integration/lib.sh"
"$ENGISWEEP" image build "$1"
"$ENGISWEEP" image path "$1"
