#!/usr/bin/env python3
"""check_report_html.py - checks heron-bench's report.html.

  check_report_html.py page OUT [--scored TASK,...] [--escaped TEXT]
      OUT/report.html is self-contained (no src attribute, no <link>, no
      href but a fragment of the page itself, nothing with http:// or
      https:// in a src or href), names every task of OUT/logs in a section
      with its heading, its two charts, its tables, and the strategies of
      its logs; the inline JSON data parses and has, per task in page order,
      a line per strategy against trials and against time with arrays of
      one length.  --scored: these tasks have a score table and the page a
      Score section.  --escaped: TEXT (from a log) occurs HTML-escaped,
      never raw.
  check_report_html.py dom DOM OUT
      DOM, the page as a browser dumped it after its load: the error
      recorder the test put in is empty, and every task of OUT/logs has its
      section with both charts drawn (an svg, a line per strategy).
  check_report_html.py dom-has-error DOM
      the error recorder holds an error (the test's check of itself).
Exit status 0 when it holds, 1 with the reasons on stderr.
"""
import html
import html.parser
import json
import os
import sys


def log_names(out):
    """{task: [labels]} from OUT/logs/<task>__<label>__s<seed>.jsonl."""
    tasks = {}
    for name in sorted(os.listdir(os.path.join(out, "logs"))):
        if not name.endswith(".jsonl"):
            continue
        task, label, _ = name[: -len(".jsonl")].split("__")
        labels = tasks.setdefault(task, [])
        if label not in labels:
            labels.append(label)
    return tasks


class Page(html.parser.HTMLParser):
    """Collects the elements that matter, with their attributes and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.elements = []  # (tag, attrs, parents' (tag, attrs))
        self.text = {}  # id(element tuple) -> text
        self.open = []

    def handle_starttag(self, tag, attrs):
        e = (tag, dict(attrs), tuple(self.stack))
        self.elements.append(e)
        if tag not in ("meta", "br", "img", "link", "input", "hr"):
            self.stack.append((tag, dict(attrs)))
            self.open.append([e, []])

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(self.stack)))

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()
            e, parts = self.open.pop()
            self.text[id(e)] = "".join(parts)
            if self.open:
                self.open[-1][1].extend(parts)

    def handle_data(self, data):
        if self.open:
            self.open[-1][1].append(data)


def parse(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = Page()
    p.feed(text)
    p.close()
    return text, p


def in_section(e, task):
    return any(t == "section" and a.get("data-task") == task for t, a in e[2])


def check_page(out, scored, escaped):
    errors = []
    text, p = parse(os.path.join(out, "report.html"))
    for tag, attrs, _ in p.elements:
        for key in ("src", "srcset", "data", "action", "poster", "background"):
            if key in attrs:
                errors.append(f"<{tag}> has {key}={attrs[key]!r}: not self-contained")
        if tag == "link":
            errors.append(f"<link {attrs}>: not self-contained")
        href = attrs.get("href")
        if href is not None and not href.startswith("#"):
            errors.append(f"<{tag}> href={href!r}: not a fragment of the page")
        for key, value in attrs.items():
            if key in ("src", "href") and value and (
                "http://" in value or "https://" in value
            ):
                errors.append(f"<{tag}> {key}={value!r} reaches the network")
    if "@import" in text or "url(" in text:
        errors.append("the style loads something (@import or url())")
    data = [e for e in p.elements if e[0] == "script" and e[1].get("id") == "heron-data"]
    if len(data) != 1 or data[0][1].get("type") != "application/json":
        return errors + ["no single <script type=application/json id=heron-data>"]
    try:
        d = json.loads(p.text[id(data[0])])
    except ValueError as e:
        return errors + [f"the JSON data does not parse: {e}"]
    tasks = log_names(out)
    names = [t["name"] for t in d["tasks"]]
    if names != sorted(tasks):
        errors.append(f"JSON tasks {names}, logs have {sorted(tasks)}")
    for i, t in enumerate(d["tasks"]):
        for axis in ("trials", "time"):
            labels = [line["label"] for line in t[axis]]
            if labels != sorted(tasks.get(t["name"], [])):
                errors.append(f"{t['name']} {axis}: lines {labels}")
            for line in t[axis]:
                n = {k: len(line[k]) for k in ("x", "mean", "lo", "hi")}
                if len(set(n.values())) != 1 or n["x"] == 0:
                    errors.append(f"{t['name']} {axis} {line['label']}: lengths {n}")
                if any(not (lo <= m <= hi) for lo, m, hi in zip(line["lo"], line["mean"], line["hi"])):
                    errors.append(f"{t['name']} {axis} {line['label']}: mean outside its band")
    for i, (task, labels) in enumerate(sorted(tasks.items())):
        sect = [e for e in p.elements if e[0] == "section" and e[1].get("data-task") == task]
        if len(sect) != 1:
            errors.append(f"task {task}: {len(sect)} sections")
            continue
        heads = [p.text.get(id(e)) for e in p.elements if e[0] == "h2" and in_section(e, task)]
        if heads != [task]:
            errors.append(f"task {task}: headings {heads}")
        figs = [e[1] for e in p.elements if e[0] == "figure" and in_section(e, task)]
        if sorted(f.get("data-axis") for f in figs) != ["time", "trials"] or any(
            f.get("data-task") != str(i) for f in figs
        ):
            errors.append(f"task {task}: charts {figs}")
        want = {"summary", "failures", "configs"} | ({"score"} if task in scored else set())
        have = {e[1].get("class") for e in p.elements if e[0] == "table" and in_section(e, task)}
        if have != want:
            errors.append(f"task {task}: tables {sorted(have)}, want {sorted(want)}")
        cells = [p.text.get(id(e)) for e in p.elements if e[0] == "td" and in_section(e, task)]
        for label in labels:
            if label not in cells:
                errors.append(f"task {task}: no row of {label}")
    if scored and not any(e[0] == "section" and e[1].get("id") == "score" for e in p.elements):
        errors.append("no Score section")
    if escaped is not None:
        if escaped in text:
            errors.append(f"{escaped!r} occurs raw")
        if html.escape(escaped, quote=True).replace("&#x27;", "&#39;") not in text:
            errors.append(f"{escaped!r} does not occur escaped")
    return errors


def recorded_errors(p):
    rec = [e for e in p.elements if e[0] == "pre" and e[1].get("id") == "heron-console-errors"]
    if len(rec) != 1:
        return None
    return p.text.get(id(rec[0]), "")


def check_dom(dom, out):
    errors = []
    _, p = parse(dom)
    rec = recorded_errors(p)
    if rec is None:
        return ["the error recorder is not in the DOM (did the page load?)"]
    if rec.strip():
        errors.append("errors while loading:\n" + rec)
    for task, labels in sorted(log_names(out).items()):
        if not any(e[0] == "section" and e[1].get("data-task") == task for e in p.elements):
            errors.append(f"task {task}: no section in the DOM")
            continue
        figs = [e for e in p.elements if e[0] == "figure" and in_section(e, task)]
        for tag, attrs, _ in figs:
            if attrs.get("data-drawn") != str(len(labels)):
                errors.append(f"task {task}: chart {attrs.get('data-axis')} drawn {attrs.get('data-drawn')!r}, want {len(labels)} lines")
        svgs = [e for e in p.elements if e[0] == "svg" and in_section(e, task)]
        lines = [e[1].get("data-label") for e in p.elements if e[0] == "polyline" and in_section(e, task)]
        if len(svgs) != 2 or sorted(lines) != sorted(labels * 2):
            errors.append(f"task {task}: {len(svgs)} svg, lines {lines}")
    return errors


def main(argv):
    if len(argv) >= 3 and argv[1] == "page":
        scored, escaped = set(), None
        rest = argv[3:]
        while rest:
            if rest[0] == "--scored":
                scored = set(rest[1].split(","))
            elif rest[0] == "--escaped":
                escaped = rest[1]
            else:
                sys.exit(f"unknown argument {rest[0]!r}")
            rest = rest[2:]
        errors = check_page(argv[2], scored, escaped)
    elif len(argv) == 4 and argv[1] == "dom":
        errors = check_dom(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "dom-has-error":
        rec = recorded_errors(parse(argv[2])[1])
        errors = [] if rec and rec.strip() else ["the injected error was not recorded"]
    else:
        sys.exit(__doc__)
    for e in errors:
        print("check_report_html:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
