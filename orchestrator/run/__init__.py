"""The run engine: hosts taken through their steps over Ansible, and what they say back."""
