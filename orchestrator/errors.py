"""The one exception type the CLI turns into a clean message instead of a traceback."""


class UserError(Exception):
    """Bad input or an unusable environment: the message says what to do next.

    The CLI prints `sslbench: <message>` on stderr and exits with `exit_code` (2 by default).
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
