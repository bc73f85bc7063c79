"""The ansible-playbook options a user types, passed through unchanged (`sslbench run -u pi -K ...`), and the
command line as run.json keeps it (extra vars redacted). Typed values in: commands/options.py reads the command
line and builds these; nothing here sees argparse."""
from __future__ import annotations

import dataclasses
import getpass
import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Collection

from orchestrator.errors import UserError


@dataclass(frozen=True)
class AnsibleOptions:
    """The options, as typed. Passwords asked for with -k / -K / --ask-vault-pass are read once on this terminal
    (`with_passwords`) and given to ansible-playbook's own prompts through ansible-runner's pexpect answers: they
    stay in memory, never on a command line, in a file or in run.json."""

    user: str | None = None
    become: bool = False
    extra_vars: tuple[str, ...] = ()
    private_key: str | None = None
    ssh_common_args: str | None = None
    vault_password_files: tuple[str, ...] = ()
    vault_ids: tuple[str, ...] = ()  # `label@file`, `label@prompt` or a file, as typed
    verbosity: int = 0
    passwords: dict[str, str] = field(default_factory=dict)  # prompt regex -> answer

    # ansible-playbook's prompts, as pexpect patterns (ansible/cli/__init__.py)
    PROMPTS = {"ask_pass": ("--ask-pass", r"^SSH password:\s*$", "SSH password: "),
               "ask_become_pass": ("--ask-become-pass", r"^BECOME password.*:\s*$", "BECOME password: "),
               "ask_vault_pass": ("--ask-vault-pass", r"^Vault password.*:\s*$", "Vault password: ")}

    def with_passwords(self, asked: Collection[str], ask: Callable[[str], str] = getpass.getpass) -> AnsibleOptions:
        """These options with their passwords: those of `asked` (names of PROMPTS: the -k, -K, -J typed) and one
        per `--vault-id LABEL@prompt` (ansible-playbook would ask "Vault password (LABEL): " for it), each asked
        once here. A prompt left unanswered (EOF, Ctrl-C) is a UserError."""
        passwords: dict[str, str] = {}
        for name, (_flag, pattern, prompt) in self.PROMPTS.items():
            if name in asked:
                passwords[pattern] = _answer(ask, prompt, f"--{name.replace('_', '-')}")
        labelled: dict[str, str] = {}
        for vault_id in self.vault_ids:
            label, source = vault_id.split("@", 1) if "@" in vault_id else ("", vault_id)  # as ansible's CLI
            if source == "prompt":
                prompt = f"Vault password ({label or 'default'}): "
                labelled[rf"^Vault password \({re.escape(label or 'default')}\):\s*$"] = _answer(
                    ask, prompt, f"--vault-id {vault_id}")
        # the labelled first: -J's pattern would match them too, and pexpect takes the first that matches
        return dataclasses.replace(self, passwords={**labelled, **passwords})

    def cmdline(self) -> list[str]:
        args: list[str] = []
        if self.user:
            args += ["--user", self.user]
        if self.become:
            args.append("--become")
        for value in self.extra_vars:
            args += ["--extra-vars", value]
        if self.private_key:
            args += ["--private-key", self.private_key]
        if self.ssh_common_args:
            args += ["--ssh-common-args", self.ssh_common_args]
        for path in self.vault_password_files:
            args += ["--vault-password-file", path]
        for vault_id in self.vault_ids:
            args += ["--vault-id", vault_id]
        args += [flag for flag, pattern, _prompt in self.PROMPTS.values() if pattern in self.passwords]
        return args


def _answer(ask: Callable[[str], str], prompt: str, option: str) -> str:
    try:
        return ask(prompt)
    except (EOFError, KeyboardInterrupt):
        raise UserError(f"no answer to '{prompt.strip()}' (asked for by {option})") from None


_EXTRA_VARS = re.compile(r"^(-e|--extra-vars)(=?)(.*)$", re.DOTALL)


def redacted_command(argv: list[str]) -> list[str]:
    """The command line as run.json keeps it: extra vars may carry secrets (`-e ansible_become_password=...`), so
    their values are replaced by *** (keys and `@file` names stay)."""
    out: list[str] = []
    redact_next = False
    for word in argv:
        if redact_next:
            out.append(_redact_vars(word))
            redact_next = False
            continue
        match = _EXTRA_VARS.match(word)
        if match and match.group(3):  # -eVALUE, --extra-vars=VALUE
            out.append(match.group(1) + match.group(2) + _redact_vars(match.group(3)))
        else:
            out.append(word)
            redact_next = bool(match)
    return out


def _redact_vars(value: str) -> str:
    if value.startswith("@"):
        return value
    if value.lstrip().startswith(("{", "[")):
        return "***"
    try:
        words = shlex.split(value)
    except ValueError:
        return "***"
    return " ".join(f"{w.split('=', 1)[0]}=***" if "=" in w else "***" for w in words)

