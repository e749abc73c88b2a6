"""A test model server: real HTTP on 127.0.0.1 speaking OpenAI Chat
Completions (POST /v1/chat/completions) and Anthropic Messages
(POST /v1/messages), serving scripted replies with real tool-call JSON.

    model_server.py --script S.json --port-file P [--log L.jsonl] [--key K] [--record]

The script is {"models": {"<model>": [reply, ...]}}. The reply for a request
is chosen by how many assistant messages the request already holds, so a
conversation replays the same way in every episode. A reply is
    {"text": "...", "calls": [{"name": "bash", "args": {...}}, ...],
     "usage": [tokens_in, tokens_out], "fault": F, "times": N, ...}
where a fault is served the first N times (default 1) that reply is due,
then the reply itself (counted per API, model and reply):
    429        status 429 with Retry-After: retry_after (default 1)
    500        status 500
    401, 403   that status (a key or an account refused)
    slow       the reply after sleep_s seconds (longer than the client timeout)
    malformed  status 200, a body that is not JSON
    truncated  Content-Length promises more than is sent, then the connection closes
    cut        a close-delimited body cut in the middle of the JSON
    huge       status 200 with a 50 MB body
With --key, requests without the right Authorization (OpenAI) or x-api-key
(Anthropic) header get 401. Every request is checked as the real APIs check
it (tools declared; tool results answer the calls before them, and for
OpenAI nothing but tool messages comes between the calls and their results;
roles alternate for Anthropic; OpenAI reasoning models, o1/o3/o4/gpt-5
names, refuse max_tokens; Anthropic extended thinking needs budget_tokens
of at least 1024 below max_tokens, no temperature, and every earlier
assistant turn with tool use must start with the thinking block it was
given, signature unchanged); a bad one gets 400. An Anthropic request with
thinking enabled gets a thinking block, signed, before the reply's content.
Each request is logged as one JSON line; with --record the line holds the
request body too ("body").

A judge model (a task's judges, `run --judge`) asks in a fresh conversation
each time, so its replies are chosen by what the request says instead:
    {"judge": {"<model>": [{"when": REGEX, "text": ..., "usage": ...,
                            "fault": ...}, ...]}}
The first reply whose `when` matches the request's messages (their text,
joined) answers; none matching is a 404. A judge's request must declare no
tools and ask for temperature 0, else 400. Its log line says "judge" and
the index of the reply that answered ("when").
"""
import base64
import re
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOLS = {"bash", "computer", "done", "fail"}


def count_assistant(api, body):
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


REASONING = re.compile(r"^(.*/)?(o[1-9]|gpt-5)")


def signature(text):
    return "sig-" + base64.b64encode(text.encode()).decode()


def check_openai(body):
    names = {t["function"]["name"] for t in body.get("tools", [])}
    if body.get("tools") is not None and not TOOLS <= names:
        return "tools missing: %s" % sorted(TOOLS - names)
    if "max_tokens" in body and REASONING.match(body.get("model", "")):
        return ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.")
    open_ids = set()
    for m in body["messages"]:
        if m["role"] != "tool" and open_ids:
            return "tool calls left unanswered before a %s message: %s" % (m["role"], sorted(open_ids))
        if m["role"] == "assistant":
            if open_ids:
                return "tool calls left unanswered: %s" % sorted(open_ids)
            open_ids = {c["id"] for c in m.get("tool_calls", [])}
            for c in m.get("tool_calls", []):
                json.loads(c["function"]["arguments"])
        elif m["role"] == "tool":
            if m["tool_call_id"] not in open_ids:
                return "tool result for unknown call %s" % m["tool_call_id"]
            open_ids.discard(m["tool_call_id"])
    if open_ids:
        return "tool calls left unanswered: %s" % sorted(open_ids)
    return None


def check_anthropic(body):
    names = {t["name"] for t in body.get("tools", [])}
    if body.get("tools") is not None and not TOOLS <= names:
        return "tools missing: %s" % sorted(TOOLS - names)
    if "max_tokens" not in body:
        return "max_tokens missing"
    th = body.get("thinking")
    if th is not None:
        if th.get("type") != "enabled" or not isinstance(th.get("budget_tokens"), int):
            return "thinking: expected {type: enabled, budget_tokens: N}"
        if th["budget_tokens"] < 1024:
            return "thinking.budget_tokens: must be at least 1024"
        if body["max_tokens"] <= th["budget_tokens"]:
            return "max_tokens must be greater than thinking.budget_tokens"
        if "temperature" in body:
            return "temperature may only be set to 1 when thinking is enabled"
        for m in body["messages"]:
            c = m["content"]
            if m["role"] == "assistant" and any(b["type"] == "tool_use" for b in c):
                if c[0]["type"] not in ("thinking", "redacted_thinking"):
                    return "Expected `thinking` or `redacted_thinking`, but found `%s`" % c[0]["type"]
                if c[0]["type"] == "thinking" and c[0].get("signature") != signature(c[0]["thinking"]):
                    return "Invalid `signature` in `thinking` block"
    last = None
    open_ids = set()
    for m in body["messages"]:
        if m["role"] == last:
            return "roles do not alternate"
        last = m["role"]
        for b in m["content"]:
            if b["type"] == "tool_use":
                open_ids.add(b["id"])
            elif b["type"] == "tool_result":
                if b["tool_use_id"] not in open_ids:
                    return "tool result for unknown call %s" % b["tool_use_id"]
                open_ids.discard(b["tool_use_id"])
    if body["messages"][0]["role"] != "user":
        return "first message is not the user's"
    return None


def openai_reply(model, r):
    msg = {"role": "assistant", "content": r.get("text")}
    calls = [{"id": "call_%d" % i, "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c.get("args", {}))}}
             for i, c in enumerate(r.get("calls", []))]
    if calls:
        msg["tool_calls"] = calls
    u = r.get("usage", [100, 10])
    return {"id": "chatcmpl-test", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": u[0], "completion_tokens": u[1],
                      "total_tokens": u[0] + u[1]}}


def anthropic_reply(model, r, thinking=False):
    content = []
    if thinking:
        t = "Let me think about %s." % model
        content.append({"type": "thinking", "thinking": t, "signature": signature(t)})
    if r.get("text"):
        content.append({"type": "text", "text": r["text"]})
    for i, c in enumerate(r.get("calls", [])):
        content.append({"type": "tool_use", "id": "toolu_%d" % i, "name": c["name"],
                        "input": c.get("args", {})})
    u = r.get("usage", [100, 10])
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
            "content": content,
            "stop_reason": "tool_use" if r.get("calls") else "end_turn",
            "usage": {"input_tokens": u[0], "output_tokens": u[1]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, payload, extra=()):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        srv = self.server
        t = time.time()
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        if self.path.endswith("/chat/completions"):
            api = "openai"
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        elif self.path.endswith("/messages"):
            api = "anthropic"
            key = self.headers.get("x-api-key") or ""
        else:
            return self.send(404, {"error": "no such path " + self.path})
        entry = {"t": t, "api": api, "path": self.path}
        try:
            body = json.loads(raw)
        except ValueError:
            entry["bad"] = "request is not JSON"
            srv.log(entry)
            return self.send(400, {"error": entry["bad"]})
        if srv.record:
            entry["body"] = body
        model = body.get("model", "")
        idx = count_assistant(api, body)
        judge = srv.script.get("judge", {}).get(model)
        entry.update(model=model, index=idx, messages=len(body.get("messages", [])),
                     tools=[(x.get("function") or x)["name"] for x in body.get("tools", [])])
        if srv.key is not None and key != srv.key:
            entry["status"] = 401
            srv.log(entry)
            return self.send(401, {"error": {"message": "invalid api key"}})
        try:
            bad = check_openai(body) if api == "openai" else check_anthropic(body)
        except (KeyError, TypeError, ValueError) as e:
            bad = "malformed request: %r" % e
        if not bad and judge is not None:
            if body.get("tools"):
                bad = "a judge's request declares tools"
            elif body.get("temperature") != 0:
                bad = "a judge's request is not at temperature 0: %r" % body.get("temperature")
        if bad:
            entry["bad"] = bad
            srv.log(entry)
            return self.send(400, {"error": {"message": bad}})
        if judge is not None:
            said = "\n".join(c if isinstance(c, str) else
                             "\n".join(b.get("text", "") for b in c if isinstance(b, dict))
                             for c in (m.get("content") or "" for m in body["messages"]))
            hit = [i for i, x in enumerate(judge) if re.search(x.get("when", ""), said)]
            if not hit:
                srv.log(dict(entry, judge=True, status=404))
                return self.send(404, {"error": {"message": "no judge reply for this request"}})
            entry.update(judge=True, when=hit[0])
            idx = hit[0]
            replies = judge
        else:
            replies = srv.script.get("models", {}).get(model)
        if replies is None:
            srv.log(dict(entry, status=404))
            return self.send(404, {"error": {"message": "unknown model " + model}})
        r = replies[idx] if idx < len(replies) else {"calls": [{"name": "fail", "args": {"reason": "script ended"}}]}
        fault = None
        if r.get("fault"):
            with srv.lock:
                k = (api, model, idx)
                used = srv.faults.get(k, 0)
                if used < r.get("times", 1):
                    srv.faults[k] = used + 1
                    fault = r["fault"]
        entry["fault"] = fault
        srv.log(entry)
        ok = (openai_reply(model, r) if api == "openai"
              else anthropic_reply(model, r, thinking="thinking" in body))
        if fault == "429":
            return self.send(429, {"error": {"message": "rate limited"}},
                             [("Retry-After", str(r.get("retry_after", 1)))])
        if fault == "500":
            return self.send(500, {"error": {"message": "internal"}})
        if fault in ("401", "403"):
            return self.send(int(fault), {"error": {"message": "refused"}})
        if fault == "slow":
            time.sleep(r.get("sleep_s", 5))
            try:
                return self.send(200, ok)
            except (BrokenPipeError, ConnectionResetError):
                return
        if fault == "malformed":
            return self.send(200, b"{\"choices\": [ this is not json")
        if fault == "truncated":
            data = json.dumps(ok).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) * 2))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "cut":
            data = json.dumps(ok).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        if fault == "huge":
            size = 50 << 20
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b" " * (1 << 20)
            try:
                for _ in range(size >> 20):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        return self.send(200, ok)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def log(self, entry):
        with self.lock:
            if self.logf:
                self.logf.write(json.dumps(entry) + "\n")
                self.logf.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--key")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.script = json.load(open(a.script))
    srv.key = a.key
    srv.record = a.record
    srv.lock = threading.Lock()
    srv.faults = {}
    srv.logf = open(a.log, "a") if a.log else None
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
