#!/usr/bin/env bash
# Writes a small EngiWorld task tree (the benchmark's layout and keys, our
# own tasks, inputs and evaluators) into DIR/task: tasks that load and run
# (judged by an eval.py that prints True or False, or that writes its score
# to score.json), and one task per reason the engiworld source refuses.
# With --defects, also tasks with the defects `engisweep audit` must find,
# one each (an evaluator noop passes, one that takes empty artifacts, a
# ground truth that fails, one that passes without the program's output,
# a CalculiX deck that is a mechanism, a summary of zeros for a deck that
# moves).
# Usage: make_tree.sh DIR [--defects]
set -euo pipefail
root=$1/task
defects=${2:-}
mkdir -p "$root/splits"
cat > "$root/taxonomy.json" <<'JSON'
{"version": "test", "task_types": [{"slug": "single-software-execution"}, {"slug": "design-optimization"}]}
JSON

# task FOLDER-PATH JSON: writes task-NN.json into the folder
task() {
	mkdir -p "$root/$1"
	cat > "$root/$1/$(basename "$1").json"
}

D=/home/user/Desktop
cli=single-software-execution/cli/calculix

# 01: solvable: write answer.txt holding 42; the evaluator says True/False
task $cli/task-01 <<JSON
{
  "id": "single-software-execution--cli--calculix--task-01--ubuntu",
  "snapshot": "CalculiX-2.21",
  "instruction": "Read $D/question.txt and write the answer, a number, to $D/answer.txt.",
  "source": "engisweep tests",
  "config": [{"type": "upload_file", "parameters": {"files": [
    {"local_path": "task-01/init_file/question.txt", "path": "$D/question.txt"}]}}],
  "trajectory": "trajectories/",
  "related_apps": ["calculix"],
  "artifact_paths": ["$D/answer.txt"],
  "evaluator": {
    "postconfig": [{"type": "upload_file", "parameters": {"files": [
      {"local_path": "task-01/eval.py", "path": "$D/eval.py"}]}}],
    "func": "exact_match",
    "result": {"type": "vm_command_line", "command": "python3 $D/eval.py", "shell": "true"},
    "expected": {"type": "rule", "rules": {"expected": "True\n"}}
  },
  "proxy": false, "fixed_ip": false, "possibility_of_env_change": "low"
}
JSON
mkdir -p "$root/$cli/task-01/init_file" "$root/$cli/task-01/ground_truth"
echo "What is six times seven?" > "$root/$cli/task-01/init_file/question.txt"
echo 42 > "$root/$cli/task-01/ground_truth/answer.txt"
cat > "$root/$cli/task-01/eval.py" <<'PY'
import sys
try:
    ok = open("/home/user/Desktop/answer.txt").read().strip() == "42"
except OSError:
    ok = False
print("True" if ok else "False")
sys.exit(0 if ok else 1)
PY

# 02: its evaluator crashes (a traceback, no True or False)
sed -e 's/task-01/task-02/g' "$root/$cli/task-01/task-01.json" > /dev/null
mkdir -p "$root/$cli/task-02"
sed -e 's/task-01/task-02/g' "$root/$cli/task-01/task-01.json" > "$root/$cli/task-02/task-02.json"
cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-01/ground_truth" "$root/$cli/task-02/"
printf 'raise SystemExit("evaluator broken: no such module")\n' > "$root/$cli/task-02/eval.py"

# refused, one reason each
refuse() { # NN REASON-TAG JQ-LIKE-EDIT (a python expression on t)
	local nn=$1 edit=$2
	mkdir -p "$root/$cli/task-$nn"
	cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-$nn/"
	cp "$root/$cli/task-01/eval.py" "$root/$cli/task-$nn/"
	python3 - "$root/$cli/task-01/task-01.json" "$root/$cli/task-$nn/task-$nn.json" "$nn" "$edit" <<'PY'
import json, sys
src, dst, nn, edit = sys.argv[1:5]
t = json.loads(open(src).read().replace("task-01", "task-" + nn))
exec(edit)
open(dst, "w").write(json.dumps(t, indent=2) + "\n")
PY
}
refuse 03 't["id"] = t["id"].replace("ubuntu", "windows")'
refuse 04 't["config"].append({"type": "open", "parameters": {"path": "/home/user/Desktop/question.txt"}})'
refuse 05 't["config"][0]["parameters"]["files"][0]["local_path"] = "task-05/init_file/absent.txt"'
refuse 06 't["evaluator"]["postconfig"][0]["parameters"]["files"][0]["local_path"] = "../../../../eval_utils.py"'
refuse 07 't["evaluator"]["func"] = ["exact_match", "exact_match"]'
refuse 08 't["artifact_paths"] = ["/tmp/answer.txt"]'
refuse 09 't["id"] = "single-software-execution--cli--openscad--task-09--ubuntu"'
refuse 10 't["evaluator"]["result"]["type"] = "vm_file"'
refuse 11 'del t["artifact_paths"]'
rm "$root/$cli/task-05/init_file/question.txt"
# 12: setup steps: a launch left running (it writes a second line two
# seconds on, which the evaluator waits for: the launch outlived its start)
# and an execute with the runtime's screen placeholders, whose status the
# runtime ignores; the evaluator wants both and the answer
mkdir -p "$root/$cli/task-12"
cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-01/ground_truth" "$root/$cli/task-12/"
python3 - "$root/$cli/task-01/task-01.json" "$root/$cli/task-12/task-12.json" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read().replace("task-01", "task-12"))
D = "/home/user/Desktop"
t["config"] += [
    {"type": "launch", "parameters": {"command": ["sh", "-c", f"echo started > {D}/launched.txt; sleep 2; echo still running >> {D}/launched.txt; sleep 600"]}},
    {"type": "execute", "parameters": {"command": f"echo {{SCREEN_WIDTH}}x{{SCREEN_HEIGHT}} > {D}/screen.txt; exit 7", "shell": True}},
    {"type": "execute", "parameters": {"command": ["python3", "-c", "print('{SCREEN_WIDTH_HALF}')"], "timeout": 30}}]
open(sys.argv[2], "w").write(json.dumps(t, indent=2) + "\n")
PY
cat > "$root/$cli/task-12/eval.py" <<'PY'
import os, pwd, time
D = "/home/user/Desktop/"
def read(name):
    try:
        return open(D + name).read()
    except OSError:
        return ""
for _ in range(100):
    if "still running" in read("launched.txt"):
        break
    time.sleep(0.1)
# and the layout the benchmark's CalculiX tasks name: /usr/bin/ccx and
# /usr/bin/cgx, the account user
layout = os.access("/usr/bin/ccx", os.X_OK) and os.access("/usr/bin/cgx", os.X_OK) and \
    pwd.getpwnam("user").pw_dir == "/home/user"
ok = layout and read("answer.txt").strip() == "42" and read("screen.txt") == "1920x1080\n" and \
    read("launched.txt") == "started\nstill running\n"
print("True" if ok else "False")
PY
# 13: a file shared by the folder's tasks (eval_utils.py beside the task
# folders; the open-environment tasks also take one from two levels up),
# and a prepare_command the runtime runs before the evaluator
mkdir -p "$root/$cli/task-13"
cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-01/ground_truth" "$root/$cli/task-13/"
cat > "$root/$cli/eval_utils.py" <<'PY'
def answer():
    try:
        return open("/home/user/Desktop/answer.txt").read().strip()
    except OSError:
        return ""
PY
mkdir -p "$root/single-software-execution/tools"
printf 'open("/tmp/engisweep-test-prepared", "w").write("ready")\n' > "$root/single-software-execution/tools/prepare.py"
cat > "$root/$cli/task-13/eval.py" <<'PY'
import os, sys
sys.path.insert(0, "/home/user/Desktop")
from eval_utils import answer
prepared = os.path.exists("/tmp/engisweep-test-prepared")
print("True" if prepared and answer() == "42" else "False")
PY
python3 - "$root/$cli/task-01/task-01.json" "$root/$cli/task-13/task-13.json" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read().replace("task-01", "task-13"))
D = "/home/user/Desktop"
t["evaluator"]["postconfig"][0]["parameters"]["files"] += [
    {"local_path": "eval_utils.py", "path": f"{D}/eval_utils.py"},
    {"local_path": "../../tools/prepare.py", "path": f"{D}/_prepare.py"}]
t["evaluator"]["result"]["prepare_command"] = f"rm -f /tmp/engisweep-test-prepared; python3 {D}/_prepare.py"
t["evaluator"]["result"]["prepare_timeout"] = 60
open(sys.argv[2], "w").write(json.dumps(t, indent=2) + "\n")
PY
# 14, 15: evaluators that fail in ways the runtime takes for their own
# failure, not a verdict: a missing module (False on stdout, the import
# error on stderr), and exit status 1 with False and a traceback
for nn in 14 15; do
	mkdir -p "$root/$cli/task-$nn"
	cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-01/ground_truth" "$root/$cli/task-$nn/"
	sed -e "s/task-01/task-$nn/g" "$root/$cli/task-01/task-01.json" > "$root/$cli/task-$nn/task-$nn.json"
done
cat > "$root/$cli/task-14/eval.py" <<'PY'
import sys
print("False")
print("ModuleNotFoundError: No module named 'ccx_tools'", file=sys.stderr)
PY
cat > "$root/$cli/task-15/eval.py" <<'PY'
print("False", flush=True)
raise RuntimeError("evaluator bug")
PY
# design optimisation: a number in design.txt, at most 10, scored x/10 by
# an evaluator that writes score.json (the benchmark's scored protocol)
opt=design-optimization/cli/openscad
task $opt/task-01 <<JSON
{
  "id": "design-optimization--cli--openscad--task-01--ubuntu",
  "snapshot": "OpenSCAD2021.01",
  "instruction": "Write to $D/design.txt the largest number you can that is at most 10.",
  "source": "engisweep tests",
  "config": [],
  "trajectory": "trajectories/",
  "related_apps": ["openscad"],
  "artifact_paths": ["$D/design.txt"],
  "evaluator": {
    "postconfig": [{"type": "upload_file", "parameters": {"files": [
      {"local_path": "task-01/eval.py", "path": "$D/eval.py"}]}}],
    "func": "quantified_score",
    "result": {"type": "vm_command_line", "command": "python3 $D/eval.py", "shell": "true"},
    "metric": {"name": "largest", "direction": "maximize", "output_field": "score",
               "baseline_score": 0.0, "max_score": 1.0}
  },
  "proxy": false, "fixed_ip": false, "possibility_of_env_change": "low"
}
JSON
mkdir -p "$root/$opt/task-01/ground_truth"
echo 7 > "$root/$opt/task-01/ground_truth/design.txt"
cat > "$root/$opt/task-01/eval.py" <<'PY'
import json
try:
    x = float(open("/home/user/Desktop/design.txt").read())
    valid = x <= 10
except (OSError, ValueError):
    x, valid = 0.0, False
score = max(0.0, min(1.0, x / 10)) if valid else 0.0
json.dump({"valid": valid, "score": score}, open("/home/user/Desktop/score.json", "w"))
print("True" if valid else "False")
PY
# 02: its artifacts include score.json, and its evaluator does not write
# one: the score is the agent's own file (said, not hidden)
mkdir -p "$root/$opt/task-02/ground_truth"
python3 - "$root/$opt/task-01/task-01.json" "$root/$opt/task-02/task-02.json" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read().replace("task-01", "task-02"))
t["artifact_paths"].append("/home/user/Desktop/score.json")
open(sys.argv[2], "w").write(json.dumps(t, indent=2) + "\n")
PY
echo 3 > "$root/$opt/task-02/ground_truth/design.txt"
echo '{"score": 0.9}' > "$root/$opt/task-02/ground_truth/score.json"
printf 'print("True")\n' > "$root/$opt/task-02/eval.py"
# a vision task: the drawing in init_file/ is shown to the agent
vis=vision-guided-modeling/cli/openscad
mkdir -p "$root/$vis/task-01/init_file" "$root/$vis/task-01/ground_truth"
python3 - "$root/$cli/task-01/task-01.json" "$root/$vis/task-01/task-01.json" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read())
t = json.loads(json.dumps(t).replace("single-software-execution--cli--calculix", "vision-guided-modeling--cli--openscad"))
t["snapshot"], t["related_apps"] = "OpenSCAD2021.01", ["openscad"]
t["instruction"] = "The drawing supplied with this message gives the answer: write it to /home/user/Desktop/answer.txt."
open(sys.argv[2], "w").write(json.dumps(t, indent=2) + "\n")
PY
cp "$root/$cli/task-01/init_file/question.txt" "$root/$vis/task-01/init_file/"
cp "$root/$cli/task-01/eval.py" "$root/$cli/task-01/ground_truth/answer.txt" "$root/$vis/task-01/"
mv "$root/$vis/task-01/answer.txt" "$root/$vis/task-01/ground_truth/"
python3 - "$root/$vis/task-01/init_file/drawing.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
raw = b"".join(b"\0" + bytes([255, 255, 255] * 8) for _ in range(8))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)) + \
    chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
echo "single-software-execution--cli--calculix--task-01--ubuntu" > "$root/splits/two.txt"
echo "single-software-execution--cli--calculix--task-02--ubuntu" >> "$root/splits/two.txt"

[ "$defects" = --defects ] || exit 0
# defect NN EVAL-PY GROUND-TRUTH-ANSWER [EXTRA-ARTIFACT]: a task like 01
defect() {
	local nn=$1 eval=$2 gt=$3 extra=${4:-}
	mkdir -p "$root/$cli/task-$nn/ground_truth"
	cp -r "$root/$cli/task-01/init_file" "$root/$cli/task-$nn/"
	printf '%s\n' "$eval" > "$root/$cli/task-$nn/eval.py"
	[ -z "$gt" ] || echo "$gt" > "$root/$cli/task-$nn/ground_truth/answer.txt"
	python3 - "$root/$cli/task-01/task-01.json" "$root/$cli/task-$nn/task-$nn.json" "$nn" "$extra" <<'PY'
import json, sys
src, dst, nn, extra = sys.argv[1:5]
t = json.loads(open(src).read().replace("task-01", "task-" + nn))
if extra:
    t["artifact_paths"] += ["/home/user/Desktop/" + e for e in extra.split(",")]
open(dst, "w").write(json.dumps(t, indent=2) + "\n")
PY
}
A=/home/user/Desktop/answer.txt
defect 21 'print("True")' 42
defect 22 "import os; print('True' if os.path.exists('$A') else 'False')" 42
defect 23 "import os; print('True' if os.path.exists('$A') and open('$A').read().strip() == '42' else 'False')" 41
# 24: beam.dat is the solver's output; the evaluator reads only the answer
defect 24 "import os; print('True' if os.path.exists('$A') and open('$A').read().strip() == '42' else 'False')" 42 beam.dat
# 25, 26: a CalculiX deck and its summary as ground truth, the evaluator
# checking only that the summary holds a number
deck() { # NN BOUNDARY-NODES SUMMARY
	local nn=$1 fixed=$2 summary=$3
	defect "$nn" "import os, re; p = '/home/user/Desktop/summary.txt'; print('True' if os.path.exists(p) and re.search('[0-9]', open(p).read()) else 'False')" "" deck.inp,summary.txt
	python3 - "$root/$cli/task-$nn/task-$nn.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["artifact_paths"] = [p for p in t["artifact_paths"] if not p.endswith("answer.txt")]
open(sys.argv[1], "w").write(json.dumps(t, indent=2) + "\n")
PY
	{
		printf '*HEADING\none hexahedron, pulled along x\n*NODE\n'
		printf '1, 0, 0, 0\n2, 1, 0, 0\n3, 1, 1, 0\n4, 0, 1, 0\n5, 0, 0, 1\n6, 1, 0, 1\n7, 1, 1, 1\n8, 0, 1, 1\n'
		printf '*ELEMENT, TYPE=C3D8, ELSET=EALL\n1, 1, 2, 3, 4, 5, 6, 7, 8\n'
		printf '*MATERIAL, NAME=STEEL\n*ELASTIC\n210000, 0.3\n*SOLID SECTION, ELSET=EALL, MATERIAL=STEEL\n'
		printf '*STEP\n*STATIC\n*BOUNDARY\n'
		for n in $fixed; do printf '%s, 1, 3\n' "$n"; done
		printf '*CLOAD\n2, 1, 100\n3, 1, 100\n6, 1, 100\n7, 1, 100\n*END STEP\n'
	} > "$root/$cli/task-$nn/ground_truth/deck.inp"
	echo "$summary" > "$root/$cli/task-$nn/ground_truth/summary.txt"
}
deck 25 "1" "0.0018, 0.0018"
deck 26 "1 4 5 8" "0.0, 0.0"

