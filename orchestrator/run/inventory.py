"""Which inventory a run reads, as ansible-playbook would choose it (-i, ANSIBLE_INVENTORY, the ansible.cfg's
`inventory =` through ansible-core's ConfigManager, else this machine, said in one line), the files sslbench ships
(playbooks/, inventory/), and `vault_hint`: what to do when Ansible could not open a vaulted inventory's secrets.
The only module importing ansible (its config, lazily)."""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.errors import UserError
from orchestrator.run.ansible_options import AnsibleOptions


def shipped_dir(name: str) -> Path:
    """playbooks/ and inventory/ sit at the top of a checkout; an installed package carries them
    inside itself (pyproject.toml maps them to orchestrator.playbooks / orchestrator.inventory)."""
    package = Path(__file__).resolve().parents[1]  # orchestrator/ (this module is in its run/ wing)
    installed = package / name
    return installed if installed.is_dir() else package.parent / name


def default_inventory() -> Path:
    return shipped_dir("inventory") / "localhost.yml"


class InventorySource(enum.Enum):
    """Where the inventory came from, in ansible-playbook's order (the first that names one wins)."""

    OPTION = "-i"
    ENVIRONMENT = "ANSIBLE_INVENTORY"
    CONFIG = "inventory = in the Ansible config"
    DEFAULT = "sslbench's default"


@dataclass(frozen=True)
class InventoryChoice:
    path: Path
    source: InventorySource
    config: str = ""  # the config file that named it (CONFIG)

    def said(self) -> str:
        """One line for the output where the inventory is not the one the user typed (-i): a user never measures
        this machine, or a fleet named elsewhere, without being told; "" for -i."""
        if self.source is InventorySource.OPTION:
            return ""
        if self.source is InventorySource.DEFAULT:
            return ("inventory: sslbench's default: this machine only (localhost); name your hosts with -i, "
                    "ANSIBLE_INVENTORY or `inventory =` in ansible.cfg")
        if self.source is InventorySource.CONFIG:
            return f"inventory: {self.path} (inventory = in {self.config})"
        return f"inventory: {self.path} ({self.source.value})"


def ansible_setting(name: str) -> tuple[Any, str]:
    """A setting (ansible-core's name, e.g. DEFAULT_HOST_LIST) and its origin ("default", "env: VAR" or the config
    file), as ansible-playbook started here would see it: ansible-core's own ConfigManager finds the config file
    (ANSIBLE_CONFIG, ./ansible.cfg unless the directory is world-writable, ~/.ansible.cfg, /etc/ansible/ansible.cfg)
    and resolves a path in it relative to that file. Imported here only: 0.1 s that -i spares."""
    try:
        from ansible.config.manager import ConfigManager  # type: ignore[import-untyped]  # no type information
        from ansible.errors import AnsibleError  # type: ignore[import-untyped]
    except ImportError as exc:  # ansible-core is a dependency: a broken install
        raise UserError(f"cannot read Ansible's configuration: {exc}") from None
    try:
        value, origin = ConfigManager().get_config_value_and_origin(name)
    except (AnsibleError, ValueError) as exc:
        raise UserError(f"Ansible: {exc}") from None
    return value, str(origin)


def choose_inventory(path: str | None) -> InventoryChoice:
    """-i, else $ANSIBLE_INVENTORY, else the `[defaults] inventory` of the config ansible-playbook would load, else
    this machine: ansible-playbook's order, one source (a file, plugin file, script or directory). A relative -i
    or ANSIBLE_INVENTORY is the directory sslbench was started in's, one in a config file that file's, as
    Ansible's. (Where nothing names one, ansible-playbook would read /etc/ansible/hosts; sslbench measures this
    machine instead, and says so.)"""
    source, config = InventorySource.OPTION, ""
    if not path:
        source = InventorySource.ENVIRONMENT
        sources = [s.strip() for s in os.environ.get("ANSIBLE_INVENTORY", "").split(",") if s.strip()]
        if not sources:
            blank = os.environ.pop("ANSIBLE_INVENTORY", None)  # set but empty: read as unset, not as "."
            try:
                value, origin = ansible_setting("DEFAULT_HOST_LIST")
            finally:
                if blank is not None:
                    os.environ["ANSIBLE_INVENTORY"] = blank
            if origin == "default":
                return InventoryChoice(default_inventory().resolve(), InventorySource.DEFAULT)
            source, config = InventorySource.CONFIG, origin
            sources = [str(v) for v in (value if isinstance(value, list) else [value]) if str(v).strip()]
        where = {InventorySource.ENVIRONMENT: "ANSIBLE_INVENTORY", InventorySource.CONFIG: f"inventory = in {config}"}
        if len(sources) != 1:
            raise UserError(f"{where[source]} names {', '.join(sources) or 'no inventory'}: sslbench takes one "
                            "inventory source (a directory can hold several); give it with -i")
        path = sources[0]
        said = f"{where[source]} names {path}, which"
    else:
        said = f"inventory {path}"
    inventory = Path(path).expanduser()
    if not inventory.exists():
        raise UserError(f"{said} does not exist; pass an Ansible inventory file or directory with -i")
    return InventoryChoice(inventory.resolve(), source, config)


def resolve_inventory(path: str | None) -> Path:
    return choose_inventory(path).path


NO_VAULT_SECRET = "no vault secrets found"  # Ansible's "Attempting to decrypt but no vault secrets found"
VAULT_NOT_OPENED = "Decryption failed"  # Ansible's: a vault secret was given, none opens the vault


def vault_hint(said: str, ansible: AnsibleOptions) -> str:
    """What to do when Ansible could not open a vault: give a password when none was given; when one was, say
    which did not open it (never ask for what the user gave). "" for any other failure."""
    if NO_VAULT_SECRET in said:
        return "; give the vault password with --vault-password-file FILE, --vault-id LABEL@FILE or --ask-vault-pass"
    if VAULT_NOT_OPENED not in said:
        return ""
    given = [f"in {path} (--vault-password-file)" for path in ansible.vault_password_files]
    for vault_id in ansible.vault_ids:
        label, source = vault_id.split("@", 1) if "@" in vault_id else ("", vault_id)
        given.append(f"typed at 'Vault password ({label or 'default'}):' (--vault-id {vault_id})" if source == "prompt"
                     else f"in {source} (--vault-id {vault_id})")
    if AnsibleOptions.PROMPTS["ask_vault_pass"][1] in ansible.passwords:
        given.append("typed at 'Vault password:' (--ask-vault-pass)")
    if not given:  # from the environment or ansible.cfg: where exactly, as Ansible read it
        try:
            for name, key in (("DEFAULT_VAULT_PASSWORD_FILE", "vault_password_file"),
                              ("DEFAULT_VAULT_IDENTITY_LIST", "vault_identity_list")):
                value, origin = ansible_setting(name)
                values = [str(v) for v in (value if isinstance(value, list) else [value]) if v]
                if values and origin != "default":
                    where = origin.removeprefix("env: ") if origin.startswith("env: ") else f"{key} in {origin}"
                    given.append(f"in {', '.join(values)} ({where})")
        except UserError:
            pass
    if not given:
        return "; the vault password Ansible was given does not open this vault (a wrong or outdated password)"
    if len(given) == 1:
        return f"; the vault password {given[0]} does not open this vault (a wrong or outdated password)"
    return f"; none of the vault passwords given opens this vault: {'; '.join(given)}"
