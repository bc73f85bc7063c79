"""sslbench_step: run the host's steps, each a script written on the controller, in one SSH exec per step with the
script on stdin (no Python on the host, no remote temp file, no command-length limit: dropbear refuses commands
over 9000 bytes).

Two ways, one task per host either way (orchestrator/bench.py decides every step):
- socket=PATH (the controller's Unix socket, orchestrator/hostlink.py): ask the controller for the host's next
  step, wait as long as it says, run it, report the output, and so on until it says `end`. One task carries the
  host through detect, install, launch, polls and cleanup, so a run costs one ansible-playbook and one worker per
  host, as plain Ansible does. The controller says `end` early (the host is asked again in a later pass) when
  other hosts wait for a worker.
- script=PATH (relative to the playbook; a site worker's run, where the controller's socket is out of reach):
  run that one script and return its output as raw does (stdout, stderr, rc); the controller reads the event.
"""
from __future__ import annotations

import json
import os
import socket
import time

from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        link = self._connect(self._task.args.get("socket") or "")
        if link is not None:
            with link:
                self._steps(link, task_vars)
            result.update(changed=True, stdout="", msg="")
            return result
        path = self._task.args.get("script")
        if not path:
            raise AnsibleActionFail("sslbench_step needs socket=PATH or script=PATH (a file on the controller)")
        path = os.path.join(task_vars.get("playbook_dir", ""), path)
        try:
            with open(path, "rb") as handle:
                payload = handle.read()
        except OSError as exc:
            raise AnsibleActionFail(f"sslbench_step cannot read {path}: {exc}") from exc
        out = self._exec(payload)
        result.update(stdout=out.get("stdout", ""), stderr=out.get("stderr", ""), rc=out.get("rc"), changed=True)
        if out.get("rc") != 0:
            result.update(failed=True, msg="non-zero return code")
        return result

    def _exec(self, script):
        # `/bin/sh -s` as the login shell's command, as raw runs its command: not wrapped in another `sh -c` with
        # `sleep 0` (what modules get), two processes fewer per step on a router
        return self._low_level_execute_command("/bin/sh -s", in_data=script, sudoable=True, executable=False)

    @staticmethod
    def _connect(path):
        if not path or not os.path.exists(path):
            return None  # the controller is elsewhere (a site worker's run): the script way
        for attempt in range(5):
            link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                link.connect(path)
                return link
            except OSError as exc:
                link.close()
                if attempt == 4:
                    raise AnsibleActionFail(f"sslbench_step cannot reach the controller at {path}: {exc}") from exc
                time.sleep(0.2 * (attempt + 1))  # a backlog full for a moment

    def _steps(self, link, task_vars):
        reader = link.makefile("r", encoding="utf-8")
        report = {"host": task_vars.get("inventory_hostname"),
                  "play_hosts": len(task_vars.get("ansible_play_hosts_all") or ()), "outcome": None}
        while True:
            link.sendall(json.dumps(report).encode("utf-8") + b"\n")
            line = reader.readline()
            if not line:
                raise AnsibleActionFail("sslbench_step: the controller closed its socket")
            answer = json.loads(line)
            if answer.get("end"):
                return
            if answer.get("wait", 0) > 0:
                time.sleep(answer["wait"])
            try:
                out = self._exec(answer["run"].encode("utf-8"))
                outcome = {"kind": "ok" if out.get("rc") == 0 else "failed", "stdout": out.get("stdout", ""),
                           "stderr": out.get("stderr", ""), "rc": out.get("rc")}
            except AnsibleConnectionFailure as exc:  # the controller decides: asked again later, or unreachable
                outcome = {"kind": "unreachable", "stdout": "", "stderr": str(exc), "rc": None}
            report = {"host": report["host"], "play_hosts": report["play_hosts"], "outcome": outcome}
