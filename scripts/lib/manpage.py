#!/usr/bin/env python3
"""Writes tsgateway's man page (roff, section 1) from the command tree the binary describes itself.

    tsgateway --experimental-dump-help | scripts/lib/manpage.py --version 0.3.0 > tsgateway.1

swift-argument-parser's generate-manual plugin would make the same page from the same JSON, but
running it builds the binary again without the package's flags (--static-swift-stdlib), a second
release build; this reads the JSON the release binary prints (ToolInfo, serialization version 0).
Every command is one section, options listed as `--help` lists them.
"""
import argparse
import datetime
import json
import sys


def roff(text):
    """Escapes text for roff: backslashes, and a leading dot or quote that would start a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def names(argument):
    """--long, -s as the user types them; a positional's value name in angle brackets."""
    if argument["kind"] == "positional":
        return "<" + argument.get("valueName", "value") + ">"
    spelled = []
    for name in argument.get("names", []):
        prefix = {"long": "--", "short": "-", "longWithSingleDash": "-"}[name["kind"]]
        spelled.append(prefix + name["name"])
    if argument["kind"] == "option":
        spelled = [s + " <" + argument.get("valueName", "value") + ">" for s in spelled]
    return ", ".join(spelled)


def paragraphs(text):
    out = []
    for block in text.strip().split("\n\n"):
        out.append(".PP")
        out.append(roff(block))
    return out


def section(command, path):
    out = []
    title = " ".join(path)
    out.append(".SS " + roff(title) if len(path) > 1 else ".SH DESCRIPTION")
    if command.get("abstract"):
        out.append(roff(command["abstract"]))
    if command.get("discussion"):
        out.extend(paragraphs(command["discussion"]))
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    if len(path) > 1:  # --help and --version are said once, for the whole tool
        shown = [a for a in shown if a.get("valueName") not in ("help", "version") or a["kind"] != "flag"]
    for argument in shown:
        out.append(".TP")
        out.append("\\fB" + roff(names(argument)) + "\\fR")
        text = argument.get("abstract", "")
        if argument.get("allValues"):
            text += " (values: " + ", ".join(argument["allValues"]) + ")"
        if argument.get("defaultValue") not in (None, ""):
            text += " (default: " + argument["defaultValue"] + ")"
        out.append(roff(text) if text else "\\&")
        if argument.get("discussion"):
            out.append(roff(argument["discussion"]))
    for sub in command.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            out.extend(section(sub, path + [sub["commandName"]]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the version the page names")
    parser.add_argument("--date", help="the page's date (default: SOURCE_DATE_EPOCH, else today)")
    options = parser.parse_args()
    try:
        tool = json.load(sys.stdin)
        root = tool["command"]
    except (json.JSONDecodeError, KeyError) as error:
        sys.exit(f"manpage.py: standard input is not tsgateway --experimental-dump-help output ({error})")
    if options.date:
        date = options.date
    else:
        import os
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now(datetime.timezone.utc)
        date = moment.strftime("%Y-%m-%d")
    name = root["commandName"]
    commands = [s["commandName"] for s in root.get("subcommands", []) if s.get("shouldDisplay", True)]
    out = [
        f'.TH {name.upper()} 1 "{date}" "{name} {options.version}" "User Commands"',
        ".SH NAME",
        f"{name} \\- " + roff(root.get("abstract", "")),
        ".SH SYNOPSIS",
        f"\\fB{name}\\fR [\\fIoptions\\fR] \\fIcommand\\fR [\\fIarguments\\fR]",
        ".PP",
        "Commands: " + ", ".join(commands) + ".",
        f"\\fB{name} help\\fR \\fIcommand\\fR or \\fB{name}\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR shows one command's help.",
    ]
    out.extend(section(root, [name]))
    out.extend([
        ".SH FILES",
        ".TP", "/etc/tsgateway/config.yaml", "The configuration of the service (\\fBtsgateway serve\\fR).",
        ".TP", "/var/lib/tsgateway/tsgateway.sqlite", "The service's database.",
        ".TP", "$XDG_DATA_HOME/tsgateway/tsgateway.sqlite",
        "The command line's own database (default ~/.local/share/tsgateway), readable by its owner only.",
        ".SH SEE ALSO",
        "\\fBbluetoothctl\\fR(1), \\fBsystemctl\\fR(1), \\fBjournalctl\\fR(1)",
    ])
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
