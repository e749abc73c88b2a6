# The accelerator choice on every kind of host. The probe boots a firmware
# of its own and chooses KVM only when it ran and reported in time:
#  - the built-in probe firmware reports (checked under TCG, which every
#    host has, so the firmware itself is tested everywhere);
#  - a probe guest that never reports (the hanging-vCPU hosts) gives TCG
#    after the probe's deadline, not later;
#  - a QEMU that exits under the probe (the aborting hosts) gives TCG at once.
# Then whole sweeps on the tiny guest where the probe passes but every KVM
# guest hangs (vCPU never runs) or aborts: each episode still completes,
# under TCG, the fallback is said once and remembered for the process; a
# marker remembers it for the host's boot.
. "$ENGI_SRC/tests/integration/lib.sh"

accel_line() { "$ENGISWEEP" inspect 2>&1 | grep 'qemu accelerator:'; }

line=$(ENGI_QEMU_PROBE_ACCEL=tcg accel_line)
case "$line" in *"accelerator: kvm (the probe guest ran under tcg and reported in"*) ;;
*) fail "built-in probe firmware did not report: $line" ;; esac

"$PY" -c "open('hang.rom','wb').write(b'\xf4' * 65536)"   # hlt at the reset vector
t0=$(date +%s.%N)
line=$(ENGI_QEMU_PROBE_ACCEL=tcg ENGI_QEMU_PROBE_ROM=$T/hang.rom ENGI_QEMU_PROBE_S=2 accel_line)
took=$("$PY" -c "import time; print(time.time() - $t0)")
case "$line" in *"accelerator: tcg (the probe guest showed no sign of life under tcg in 2.0 s)"*) ;;
*) fail "hanging probe: $line" ;; esac
"$PY" -c "import sys; t = $took; sys.exit(0 if 1.9 <= t <= 5 else 1)" \
	|| fail "hanging probe took $took s (deadline 2 s)"
echo "hanging probe: tcg after $took s"

printf 'not a firmware' > bad.rom
t0=$(date +%s.%N)
line=$(ENGI_QEMU_PROBE_ACCEL=tcg ENGI_QEMU_PROBE_ROM=$T/bad.rom ENGI_QEMU_PROBE_S=20 accel_line)
took=$("$PY" -c "import time; print(time.time() - $t0)")
case "$line" in *"accelerator: tcg (QEMU under tcg exited with status 1 before the probe guest reported"*) ;;
*) fail "aborting probe: $line" ;; esac
"$PY" -c "import sys; sys.exit(0 if $took < 10 else 1)" || fail "aborting probe took $took s"

# a host where a guest showed no sign of life under KVM is remembered until
# it reboots: the marker of this boot gives TCG without probing, one of an
# earlier boot does not
mkdir cache
marker=cache/kvm-no-life-$(hostname | tr / _)
cat /proc/sys/kernel/random/boot_id > "$marker"
line=$(ENGISWEEP_IMAGES=$T/cache accel_line)
case "$line" in *"accelerator: tcg (a guest under KVM showed no sign of life earlier since this host booted"*) ;;
*) fail "marker of this boot ignored: $line" ;; esac
echo 00000000-0000-0000-0000-000000000000 > "$marker"
line=$(ENGISWEEP_IMAGES=$T/cache accel_line)
case "$line" in *"earlier since this host booted"*) fail "marker of another boot used: $line" ;; esac

line=$(ENGI_QEMU_ACCEL=tcg accel_line)
case "$line" in *"tcg (forced by ENGI_QEMU_ACCEL)"*) ;; *) fail "forced: $line" ;; esac

bash "$ENGI_SRC/tests/integration/make_suite.sh" suite 2 0
for mode in hang abort; do
	t0=$(date +%s.%N)
	ENGI_QEMU_FAKE_KVM=$mode ENGI_QEMU_LIFE_S=4 \
		"$ENGISWEEP" run --backend qemu --quiet --out r-$mode suite 2> run-$mode.log \
		|| { cat run-$mode.log; fail "$mode: the sweep failed"; }
	took=$("$PY" -c "import time; print(time.time() - $t0)")
	echo "$mode: sweep in $took s"
	grep -q "accelerator kvm: test override ENGI_QEMU_FAKE_KVM=$mode" run-$mode.log \
		|| { cat run-$mode.log; fail "$mode: the probe did not choose KVM"; }
	n=$(grep -c "accelerator tcg: a guest under KVM" run-$mode.log || true)
	[ "$n" -eq 1 ] || { cat run-$mode.log; fail "$mode: fallback said $n times, expected once"; }
	if [ $mode = hang ]; then
		grep -q "accelerator tcg: a guest under KVM showed no sign of life in 4 s; TCG from now on" \
			run-$mode.log || { cat run-$mode.log; fail "hang: no life-sign message"; }
	fi
	PYTHONPATH="$ENGI_SRC/tests/integration" "$PY" - r-$mode/results.h5 <<'PY'
import sys
import results as R
ep = R.episodes(sys.argv[1])
assert len(ep) == 2, ep
for e in ep:
    # the fallback happens inside the start: not an attempt of its own
    assert R.s(e["outcome"]) == "done" and e["success"] == 1 and e["attempts"] == 1, e
PY
done
