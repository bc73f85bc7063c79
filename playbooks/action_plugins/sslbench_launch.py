"""sslbench_launch: run a script written on the controller on the host, in one SSH exec, the script on stdin.

playbooks/sslbench.yml ships each host's launcher with it (orchestrator/bench.py writes the launcher: the runner,
its conditions script and cells, then the start). Unlike the script module there is no remote temp dir, no file
transfer and no chmod: one exec, no Python on the host, no file in its home, and no command-length limit
(dropbear refuses commands over 9000 bytes). The output is returned as raw's is: stdout, stderr, rc.
"""
from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        path = self._task.args.get("script")
        if not path:
            raise AnsibleActionFail("sslbench_launch needs script=PATH (a file on the controller)")
        # relative to the playbook: the run's project dir travels whole to a site worker
        path = os.path.join((task_vars or {}).get("playbook_dir", ""), path)
        try:
            with open(path, "rb") as handle:
                payload = handle.read()
        except OSError as exc:
            raise AnsibleActionFail(f"sslbench_launch cannot read {path}: {exc}") from exc
        out = self._low_level_execute_command("/bin/sh -s", in_data=payload, sudoable=True)
        result.update(stdout=out.get("stdout", ""), stderr=out.get("stderr", ""), rc=out.get("rc"), changed=True)
        if out.get("rc") != 0:
            result.update(failed=True, msg="non-zero return code")
        return result
