# starve.py ANCESTOR SECONDS: starves the vCPUs of the QEMUs started under
# process ANCESTOR, as a loaded host does: each vCPU thread ("CPU n/TCG",
# "CPU n/KVM") is pinned to the first CPU of this process's set at nice 19,
# where two spinners at nice 0 run 300 ms of every 400, so that the guest
# runs in short bursts far apart. Input sent at the plain pace overflows the
# emulated keyboard's 16-byte queue then; paced input must arrive whole.
import glob, os, signal, sys, time

ancestor, seconds = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + seconds
cpu = min(os.sched_getaffinity(0))


def parent(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def ours(pid):
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent(pid)
    return False


def vcpus():
    for comm in glob.glob("/proc/[0-9]*/task/[0-9]*/comm"):
        try:
            name = open(comm).read().strip()
        except OSError:
            continue
        if name.startswith("CPU ") and "/" in name:
            parts = comm.split("/")
            yield int(parts[2]), int(parts[4])


spinners = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpu})
        while time.time() < end:
            t = time.time()
            while time.time() - t < 0.3:
                pass
            time.sleep(0.1)
        os._exit(0)
    spinners.append(pid)



def bye(*_):
    for pid in spinners:
        os.kill(pid, signal.SIGKILL)
    os._exit(0)


signal.signal(signal.SIGTERM, bye)
seen = set()
while time.time() < end:
    for pid, tid in vcpus():
        if tid in seen or not ours(pid):
            continue
        try:
            os.sched_setaffinity(tid, {cpu})
            os.setpriority(os.PRIO_PROCESS, tid, 19)
            seen.add(tid)
            print("starving", pid, tid, flush=True)
        except OSError as e:
            print("cannot starve", pid, tid, e, flush=True)
    time.sleep(0.05)
for pid in spinners:
    os.waitpid(pid, 0)
