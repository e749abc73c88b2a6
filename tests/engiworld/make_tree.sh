#!/usr/bin/env bash
# Writes a small EngiWorld task tree (the benchmark's layout and keys, our
# own tasks, inputs and evaluators) into DIR/task: tasks that load and run
# (judged by an eval.py that prints True or False, or that writes its score
# to score.json), and one task per reason the engiworld source refuses.
# Usage: make_tree.sh DIR
set -euo pipefail
root=$1/task
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
refuse 04 't["config"].append({"type": "launch", "parameters": {"command": ["calculix"]}})'
refuse 05 't["config"][0]["parameters"]["files"][0]["local_path"] = "task-05/init_file/absent.txt"'
refuse 06 't["evaluator"]["postconfig"][0]["parameters"]["files"][0]["local_path"] = "eval_utils.py"'
refuse 07 't["evaluator"]["func"] = ["exact_match", "exact_match"]'
refuse 08 't["artifact_paths"] = ["/tmp/answer.txt"]'
refuse 09 't["id"] = "single-software-execution--cli--openscad--task-09--ubuntu"'
refuse 10 't["evaluator"]["result"]["type"] = "vm_file"'
refuse 11 'del t["artifact_paths"]'
rm "$root/$cli/task-05/init_file/question.txt"
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
