"""A log as it reaches the n-th reply of a mail thread: each reply quotes the message (`> `) and the mail
client rewraps it at 72 columns, a long line broken at its last space before column 72 (the space kept,
format=flowed) and its rest put on a new line with the same quote prefix.

    python3 mail_thread.py DEPTH < openssl-speed.txt > thread.log
"""
import re
import sys


def rewrap(text: str, width: int = 72) -> str:
    out = []
    for line in text.split("\n"):
        prefix = re.match(r"(?:> ?)*", line).group(0)
        if prefix and not prefix.endswith(" "):
            prefix += " "
        while len(line) > width:
            cut = line.rfind(" ", len(prefix), width)
            if cut <= len(prefix):
                break
            out.append(line[:cut + 1])
            line = prefix + line[cut + 1:]
        out.append(line)
    return "\n".join(out)


def quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def thread(text: str, depth: int) -> str:
    for _ in range(depth):
        text = rewrap(quote(text))
    return text


if __name__ == "__main__":
    sys.stdout.write(thread(sys.stdin.read(), int(sys.argv[1])))
