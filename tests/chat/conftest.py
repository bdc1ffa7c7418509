"""The chat's readers are accounts: the accounts tests' users, fresh cache and fast passwords."""

from tests.accounts.conftest import (  # noqa: F401
    _fast_passwords,
    _fresh_cache,
    researcher_factory,
    user_factory,
)
