"""Settings (SPEC §5): flag > environment > stored file > default, and where the OpenAI key comes from.

The autouse ``isolated_env`` fixture gives every test its own ``LANCELOT_CONFIG_DIR`` and keyring's
``fail`` backend, so nothing here reads or writes the developer's own configuration or keychain.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import keyring
import keyring.backend
import pytest

from lancelot_cli import keyfile
from lancelot_cli.credentials import KEYRING_SERVICE, KEYRING_USER, FoundKey, find_openai_key
from lancelot_cli.errors import ConfigError
from lancelot_cli.settings import SETTINGS_FILE, Settings, config_dir, load, read_stored, write_stored
from tests.support.keyrings import MemoryKeyring

# -- 7. precedence ---------------------------------------------------------------------------------------


def test_defaults(isolated_env, monkeypatch):
    monkeypatch.delenv("LANCELOT_WARM")  # conftest sets it to 0 for every test
    s = load()
    assert s.db_uri is None
    assert (s.table, s.text_column, s.vector_column) == ("documents", "text", "vector")
    assert (s.default_limit, s.context_budget) == (20, 8000)
    assert s.embedding_model == "text-embedding-ada-002"
    assert s.embedding_dimensions == 1536
    assert s.openai_base_url is None
    assert s.allowed_origins == () and s.allowed_hosts == ()
    assert s.log_level == "info"
    assert s.config_dir == isolated_env
    assert set(s.sources.values()) == {"default"}
    assert "LANCEDB_PATH" in s.sources and "EMBEDDING_MODEL" in s.sources


def test_precedence_flag_env_file_default(monkeypatch, isolated_env):
    write_stored(
        isolated_env,
        {
            "LANCEDB_PATH": "/from/file",
            "LANCEDB_TABLE": "file_table",
            "LANCEDB_TEXT_COLUMN": "file_text",
            "LANCEDB_VECTOR_COLUMN": "file_vec",
            "LANCEDB_DEFAULT_LIMIT": "7",
        },
    )
    monkeypatch.setenv("LANCEDB_PATH", "/from/env")
    monkeypatch.setenv("LANCEDB_TABLE", "env_table")
    monkeypatch.setenv("LANCEDB_TEXT_COLUMN", "env_text")
    s = load(flags={"LANCEDB_PATH": "/from/flag", "LANCEDB_TABLE": None})

    assert s.db_uri == "/from/flag"  # flag beats env and file
    assert s.table == "env_table"  # a None flag is ignored; env beats file
    assert s.text_column == "env_text"  # env beats file
    assert s.vector_column == "file_vec"  # file beats default
    assert s.default_limit == 7  # file, converted to int
    assert s.context_budget == 8000  # default
    assert s.sources["LANCEDB_PATH"] == "flag"
    assert s.sources["LANCEDB_TABLE"] == "env"
    assert s.sources["LANCEDB_TEXT_COLUMN"] == "env"
    assert s.sources["LANCEDB_VECTOR_COLUMN"] == "file"
    assert s.sources["LANCEDB_DEFAULT_LIMIT"] == "file"
    assert s.sources["LANCEDB_CONTEXT_BUDGET"] == "default"


def test_explicit_environ_mapping_is_used_instead_of_os_environ(monkeypatch, tmp_path):
    monkeypatch.setenv("LANCEDB_TABLE", "from_os_environ")
    write_stored(tmp_path / "cfg", {"LANCEDB_TEXT_COLUMN": "stored"})
    s = load(environ={"LANCELOT_CONFIG_DIR": str(tmp_path / "cfg"), "LANCEDB_PATH": "/x"})
    assert s.table == "documents"
    assert s.text_column == "stored"
    assert s.db_uri == "/x"
    assert s.config_dir == tmp_path / "cfg"


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_blank_env_falls_through_to_file(monkeypatch, isolated_env, blank):
    write_stored(isolated_env, {"LANCEDB_PATH": "/stored/db", "LANCEDB_DEFAULT_LIMIT": "9"})
    monkeypatch.setenv("LANCEDB_PATH", blank)
    monkeypatch.setenv("LANCEDB_DEFAULT_LIMIT", blank)
    monkeypatch.setenv("LANCEDB_TABLE", blank)  # nothing stored: the default
    s = load()
    assert s.db_uri == "/stored/db"
    assert s.default_limit == 9
    assert s.table == "documents"
    assert s.sources["LANCEDB_PATH"] == "file"
    assert s.sources["LANCEDB_DEFAULT_LIMIT"] == "file"
    assert s.sources["LANCEDB_TABLE"] == "default"


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_flag_falls_through_to_env(monkeypatch, blank):
    monkeypatch.setenv("LANCEDB_PATH", "/env/db")
    s = load(flags={"LANCEDB_PATH": blank})
    assert s.db_uri == "/env/db"
    assert s.sources["LANCEDB_PATH"] == "env"


def test_values_are_trimmed(monkeypatch):
    monkeypatch.setenv("LANCEDB_PATH", "  /padded/db  ")
    monkeypatch.setenv("LANCEDB_CONTEXT_BUDGET", " 1500 ")
    s = load()
    assert s.db_uri == "/padded/db"
    assert s.context_budget == 1500


@pytest.mark.parametrize("name", ["LANCEDB_DEFAULT_LIMIT", "LANCEDB_CONTEXT_BUDGET", "EMBEDDING_DIMENSIONS"])
@pytest.mark.parametrize("value", ["ten", "1.5", "20 hits", "0", "-3"])
def test_bad_int_from_env_names_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load()
    assert name in str(info.value)
    assert "env" in str(info.value)


def test_bad_int_from_file_names_the_variable_and_the_file(isolated_env):
    write_stored(isolated_env, {"LANCEDB_CONTEXT_BUDGET": "lots"})
    with pytest.raises(ConfigError) as info:
        load()
    assert "LANCEDB_CONTEXT_BUDGET" in str(info.value)
    assert "file" in str(info.value)


def test_bad_flag_names_the_variable():
    with pytest.raises(ConfigError, match="LANCEDB_DEFAULT_LIMIT"):
        load(flags={"LANCEDB_DEFAULT_LIMIT": "many"})


@pytest.mark.parametrize("content", ["{not json", "[1, 2, 3]", '"a string"', "\x00\x01"])
def test_corrupt_settings_file(isolated_env, content):
    (isolated_env / SETTINGS_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load()
    assert str(isolated_env / SETTINGS_FILE) in str(info.value)


def test_list_settings_split_on_commas(monkeypatch, isolated_env):
    monkeypatch.setenv("LANCELOT_ALLOWED_ORIGINS", " https://a.example , https://b.example,, ,")
    write_stored(isolated_env, {"LANCELOT_ALLOWED_HOSTS": "localhost:3000,127.0.0.1:3000"})
    s = load()
    assert s.allowed_origins == ("https://a.example", "https://b.example")
    assert s.allowed_hosts == ("localhost:3000", "127.0.0.1:3000")
    assert s.sources["LANCELOT_ALLOWED_ORIGINS"] == "env"
    assert s.sources["LANCELOT_ALLOWED_HOSTS"] == "file"
    monkeypatch.setenv("LANCELOT_ALLOWED_ORIGINS", "https://only.example")
    assert load().allowed_origins == ("https://only.example",)


@pytest.mark.parametrize(
    ("level", "number"),
    [("debug", 10), ("ERROR", 40), ("warn", 30), ("silly", 5), ("http", 15), ("verbose", 15), ("info", 20)],
)
def test_log_levels_map_onto_python_logging(monkeypatch, level, number):
    monkeypatch.setenv("LANCELOT_LOG_LEVEL", level)
    assert load().log_level_number == number


def test_every_setting_reads_its_variable(monkeypatch):
    env = {
        "LANCEDB_PATH": "/p",
        "LANCEDB_TABLE": "t",
        "LANCEDB_TEXT_COLUMN": "tc",
        "LANCEDB_VECTOR_COLUMN": "vc",
        "LANCEDB_DEFAULT_LIMIT": "3",
        "LANCEDB_CONTEXT_BUDGET": "300",
        "OPENAI_BASE_URL": "http://h/v1",
        "EMBEDDING_MODEL": "m",
        "EMBEDDING_DIMENSIONS": "64",
        "LANCELOT_LOG_LEVEL": "debug",
        "LANCELOT_BASE_PATH": "/lancelot",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    s = load()
    assert (s.db_uri, s.table, s.text_column, s.vector_column) == ("/p", "t", "tc", "vc")
    assert (s.default_limit, s.context_budget, s.embedding_dimensions) == (3, 300, 64)
    assert (s.openai_base_url, s.embedding_model, s.log_level, s.base_path) == (
        "http://h/v1",
        "m",
        "debug",
        "/lancelot",
    )
    assert all(s.sources[name] == "env" for name in env)


def test_settings_are_immutable():
    s = load()
    assert isinstance(s, Settings)
    with pytest.raises(AttributeError):
        s.table = "other"  # type: ignore[misc]


# -- config dir and the stored file -------------------------------------------------------------------


def test_config_dir_override_and_default(tmp_path):
    assert config_dir({"LANCELOT_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert config_dir({"LANCELOT_CONFIG_DIR": " ~/lancelot-cfg "}) == Path("~/lancelot-cfg").expanduser()
    from platformdirs import user_config_dir

    platform = Path(user_config_dir("lancelot", appauthor=False))
    assert config_dir({}) == platform
    assert config_dir({"LANCELOT_CONFIG_DIR": "   "}) == platform


def test_write_and_read_stored_round_trip(tmp_path):
    target = tmp_path / "new" / "cfg"
    path = write_stored(target, {"LANCEDB_PATH": "/abs/db", "LANCEDB_TABLE": "docs"})
    assert path == target / SETTINGS_FILE
    assert json.loads(path.read_text(encoding="utf-8")) == {"LANCEDB_PATH": "/abs/db", "LANCEDB_TABLE": "docs"}
    assert read_stored(target) == {"LANCEDB_PATH": "/abs/db", "LANCEDB_TABLE": "docs"}
    write_stored(target, {"LANCEDB_PATH": "/other"})
    assert read_stored(target) == {"LANCEDB_PATH": "/other"}
    assert sorted(p.name for p in target.iterdir()) == [SETTINGS_FILE]  # no temporary file left behind


def test_read_stored_missing_file_and_non_string_values(tmp_path):
    assert read_stored(tmp_path / "nowhere") == {}
    (tmp_path / SETTINGS_FILE).write_text(json.dumps({"LANCEDB_DEFAULT_LIMIT": 12, "LANCEDB_TABLE": None}))
    assert read_stored(tmp_path) == {"LANCEDB_DEFAULT_LIMIT": "12"}


def test_stored_key_never_in_settings_file(isolated_env):
    keyfile.write_key(isolated_env, "sk-never-in-settings")
    write_stored(isolated_env, {"LANCEDB_PATH": "/db"})
    assert "sk-never-in-settings" not in (isolated_env / SETTINGS_FILE).read_text()


# -- 8. credentials ------------------------------------------------------------------------------------


def test_env_key_wins_over_stored_key(monkeypatch, isolated_env):
    keyfile.write_key(isolated_env, "sk-from-file")
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-from-env  ")
    found = find_openai_key(isolated_env)
    assert found == FoundKey("sk-from-env", "env")


def test_explicit_environ_for_key(isolated_env):
    assert find_openai_key(isolated_env, {"OPENAI_API_KEY": "sk-mapping"}) == FoundKey("sk-mapping", "env")
    assert find_openai_key(isolated_env, {}) is None


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_env_key_falls_through(monkeypatch, isolated_env, blank):
    monkeypatch.setenv("OPENAI_API_KEY", blank)
    assert find_openai_key(isolated_env) is None
    keyfile.write_key(isolated_env, "sk-from-file")
    assert find_openai_key(isolated_env) == FoundKey("sk-from-file", "file")


def test_fail_backend_means_no_key(isolated_env):
    from keyring.errors import KeyringError

    with pytest.raises(KeyringError):  # the fixture's backend really is the failing one
        keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
    assert find_openai_key(isolated_env) is None


def test_key_file_private_encrypted_round_trip(isolated_env):
    secret_key = "sk-proj-Abc123_very-secret-value"
    path = keyfile.write_key(isolated_env, secret_key)
    assert path.parent == isolated_env
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((isolated_env / keyfile.SECRET_FILE).stat().st_mode) == 0o600
    raw = path.read_bytes()
    assert secret_key.encode() not in raw
    assert b"Abc123_very-secret" not in raw
    for other in isolated_env.iterdir():  # the key is in no file in plain text
        assert secret_key.encode() not in other.read_bytes()
    assert keyfile.read_key(isolated_env) == secret_key
    assert find_openai_key(isolated_env) == FoundKey(secret_key, "file")
    # writing again replaces it
    keyfile.write_key(isolated_env, "sk-second")
    assert keyfile.read_key(isolated_env) == "sk-second"
    assert not list(isolated_env.glob("*.tmp"))


def test_two_writes_of_the_same_key_differ(isolated_env):
    first = keyfile.write_key(isolated_env, "sk-same").read_bytes()
    second = keyfile.write_key(isolated_env, "sk-same").read_bytes()
    assert first != second  # fresh salt and IV each time


def test_key_file_with_passphrase(monkeypatch, isolated_env):
    monkeypatch.setenv("LANCELOT_KEY_PASSPHRASE", "correct horse")
    keyfile.write_key(isolated_env, "sk-pass")
    assert not (isolated_env / keyfile.SECRET_FILE).exists()
    assert find_openai_key(isolated_env) == FoundKey("sk-pass", "file")
    monkeypatch.setenv("LANCELOT_KEY_PASSPHRASE", "wrong horse")
    assert find_openai_key(isolated_env) is None  # cannot decrypt: no key, no crash


def test_tampered_or_orphaned_key_file_is_no_key(isolated_env):
    path = keyfile.write_key(isolated_env, "sk-tamper")
    body = json.loads(path.read_text())
    body["token"] = body["token"][:-6] + "AAAAAA"
    path.write_text(json.dumps(body))
    assert find_openai_key(isolated_env) is None
    path.write_text("not json at all")
    assert find_openai_key(isolated_env) is None
    keyfile.write_key(isolated_env, "sk-orphan")
    (isolated_env / keyfile.SECRET_FILE).unlink()
    assert find_openai_key(isolated_env) is None
    with pytest.raises(ValueError):
        keyfile.read_key(isolated_env)


def test_delete_key(isolated_env):
    assert keyfile.delete_key(isolated_env) is False
    keyfile.write_key(isolated_env, "sk-delete-me")
    assert keyfile.delete_key(isolated_env) is True
    assert keyfile.read_key(isolated_env) is None
    assert find_openai_key(isolated_env) is None


def test_key_from_file_is_trimmed_like_the_others(isolated_env):
    """env and keychain values are trimmed; a stored file value with a trailing newline must be too."""
    keyfile.write_key(isolated_env, " sk-with-newline\n")
    assert find_openai_key(isolated_env) == FoundKey("sk-with-newline", "file")


def test_found_key_repr_hides_the_key():
    found = FoundKey("sk-super-secret-123", "keychain")
    for text in (repr(found), str(found), f"{found}", repr([found]), repr({"k": found})):
        assert "sk-super-secret-123" not in text
        assert "super-secret" not in text
    assert "keychain" in repr(found)
    assert found.value == "sk-super-secret-123"  # still usable


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("D-Bus went away")


def test_key_from_keychain(use_keyring, isolated_env):
    backend = use_keyring(MemoryKeyring())
    assert find_openai_key(isolated_env) is None
    keyring.set_password(KEYRING_SERVICE, KEYRING_USER, "sk-in-keychain")
    found = find_openai_key(isolated_env)
    assert found == FoundKey("sk-in-keychain", "keychain")
    assert "sk-in-keychain" not in repr(found)
    assert backend.store == {("lancelot", "OPENAI_API_KEY"): "sk-in-keychain"}


def test_keychain_order_between_env_and_file(monkeypatch, use_keyring, isolated_env):
    use_keyring(MemoryKeyring())
    keyfile.write_key(isolated_env, "sk-from-file")
    assert find_openai_key(isolated_env).source == "file"
    keyring.set_password(KEYRING_SERVICE, KEYRING_USER, "sk-from-keychain")
    assert find_openai_key(isolated_env) == FoundKey("sk-from-keychain", "keychain")  # keychain beats file
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert find_openai_key(isolated_env) == FoundKey("sk-from-env", "env")  # env beats keychain
    monkeypatch.delenv("OPENAI_API_KEY")
    keyring.set_password(KEYRING_SERVICE, KEYRING_USER, "   ")  # blank keychain entry counts as none
    assert find_openai_key(isolated_env).source == "file"


def test_broken_keychain_is_no_key(use_keyring, isolated_env):
    use_keyring(BrokenKeyring())
    assert find_openai_key(isolated_env) is None
    keyfile.write_key(isolated_env, "sk-fallback")
    assert find_openai_key(isolated_env) == FoundKey("sk-fallback", "file")


def test_keyring_backend_is_restored_between_tests():
    assert not isinstance(keyring.get_keyring(), MemoryKeyring)
    assert os.environ["PYTHON_KEYRING_BACKEND"] == "keyring.backends.fail.Keyring"


# -- the settings table (issue 15: declared once) ---------------------------------------------------------


def test_every_variable_the_code_reads_is_cleared_for_tests():
    """A name like "LANCELOT_X" anywhere in the package is in the list tests clear (so a developer's
    shell cannot leak into a test). The old hand-written list had no LANCELOT_READ_CONSISTENCY."""
    import re

    from tests.conftest import _LEAKY

    package = Path(__file__).resolve().parent.parent / "lancelot_cli"
    read = set()
    for path in package.rglob("*.py"):
        read |= set(re.findall(r"[\"']((?:LANCELOT|LANCEDB|OPENAI|EMBEDDING)_[A-Z_]+)[\"']", path.read_text()))
    assert read, "the pattern found nothing: the test is broken"
    assert read - set(_LEAKY) == set()
    assert {"LANCELOT_READ_CONSISTENCY", "LANCELOT_STORAGE_OPTIONS", "OPENAI_API_KEY"} <= set(_LEAKY)


def test_the_table_drives_load_and_the_defaults(monkeypatch):
    """Every row of the table is read from the environment into its attribute, and unset gives its default."""
    from lancelot_cli.settings import FIELDS

    samples = {"str": "x1", "int": "7", "list": "a,b", "seconds": "3", "minutes": "0.5", "json": '{"k": "v"}'}
    expected = {"str": "x1", "int": 7, "list": ("a", "b"), "seconds": 3.0, "minutes": 0.5, "json": {"k": "v"}}
    monkeypatch.delenv("LANCELOT_WARM")  # conftest sets it to 0 for every test
    defaults = load()
    for setting in FIELDS:
        assert getattr(defaults, setting.attr) == setting.default
        monkeypatch.setenv(setting.name, samples[setting.kind])
    s = load()
    for setting in FIELDS:
        assert getattr(s, setting.attr) == expected[setting.kind], setting.name
        assert s.sources[setting.name] == "env"


def test_rows_for_status_and_show_and_one_name_for_the_database(monkeypatch):
    from lancelot_cli.settings import DEFAULT_TABLE, FIELDS, rows

    monkeypatch.setenv("LANCEDB_PATH", "/srv/db")
    monkeypatch.setenv("LANCELOT_STORAGE_OPTIONS", '{"aws_secret_access_key": "hush", "region": "eu-west-1"}')
    s = load()
    assert s.db_uri == "/srv/db" and not hasattr(s, "db_path")  # one name for the database location
    every = rows(s)
    assert [r[0] for r in every] == [f.name for f in FIELDS]
    status = {name: (value, source) for name, value, source in rows(s, status_only=True)}
    assert list(status)[:2] == ["LANCEDB_PATH", "LANCEDB_TABLE"] and "LANCELOT_LOG_LEVEL" not in status
    assert status["LANCEDB_PATH"] == ("/srv/db", "env")
    assert status["OPENAI_BASE_URL"] == ("OpenAI", "default")
    options = {name: value for name, value, _ in every}["LANCELOT_STORAGE_OPTIONS"]
    assert "hush" not in options and "eu-west-1" in options
    assert DEFAULT_TABLE == "documents"
