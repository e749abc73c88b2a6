/* The qemu backend's registry entry while it is not built: users read that
 * it exists and why it is missing, not "unknown backend". */
#include "backend.h"

const struct backend_desc backend_qemu = {
	.name = "qemu",
	.summary = "clean QEMU virtual machine per episode (qcow2 overlay, saved state, guest agent, QMP)",
	.caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES | BACKEND_CAP_SCREEN |
		BACKEND_CAP_INPUT | BACKEND_CAP_ISOLATED,
	.priv_size = 0,
	.ops = NULL,
	.not_built_hint = "this build has no QEMU support yet; use --backend local",
};
