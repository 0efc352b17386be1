"""Federation config files: config.json's memory block and resilience.json's budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elastic_memory.errors import UsageError
from elastic_memory.extraction import ExtractionPolicy
from elastic_memory.federation import MemorySettings, TierBudget, load_budgets, load_settings


def write_config(home: Path, data: Any) -> Path:
    path = home / "config.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_budgets(home: Path, data: Any) -> Path:
    path = home / "resilience.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def settings_error(home: Path, memory: Any) -> str:
    write_config(home, {"memory": memory})
    with pytest.raises(UsageError) as info:
        load_settings(home)
    return str(info.value)


def budgets_error(home: Path, data: Any) -> str:
    write_budgets(home, data)
    with pytest.raises(UsageError) as info:
        load_budgets(home)
    return str(info.value)


# ------------------------------------------------------------------ config.json


def test_missing_config_file_gives_defaults(tmp_path: Path) -> None:
    """No config.json: memory on, SQLite private and global, no pools, default extraction."""
    settings = load_settings(tmp_path)
    assert settings == MemorySettings()
    assert (settings.enabled, settings.private, settings.global_, settings.pools) == (True, "sqlite", "sqlite", ())
    assert settings.extraction == ExtractionPolicy()


def test_missing_home_folder_gives_defaults(tmp_path: Path) -> None:
    """A home folder that does not exist yet reads as defaults too."""
    assert load_settings(tmp_path / "nowhere") == MemorySettings()
    assert load_budgets(tmp_path / "nowhere") == {}


def test_config_without_memory_block_gives_defaults(tmp_path: Path) -> None:
    """A config.json for other settings leaves memory at its defaults."""
    write_config(tmp_path, {"theme": "dark"})
    assert load_settings(tmp_path) == MemorySettings()


def test_full_memory_block_is_read(tmp_path: Path) -> None:
    """Every setting of the block is taken; pools keep their order without duplicates."""
    write_config(
        tmp_path,
        {
            "memory": {
                "enabled": False,
                "private": "sqlite",
                "global": "none",
                "pools": ["team-research", "ops", "team-research"],
                "extraction": {"agent_confidence_cap": 0.7, "min_confidence": 0.2, "reserved_prefixes": ["sys."]},
            }
        },
    )
    settings = load_settings(tmp_path)
    assert (settings.enabled, settings.private, settings.global_) == (False, "sqlite", "none")
    assert settings.pools == ("team-research", "ops")
    assert settings.extraction.agent_confidence_cap == 0.7
    assert settings.extraction.min_confidence == 0.2
    assert settings.extraction.reserved_prefixes == ("sys.",)


def test_unknown_memory_key_names_file_and_key(tmp_path: Path) -> None:
    """A misspelt setting is refused, naming the file and the key."""
    msg = settings_error(tmp_path, {"pols": ["team"]})
    assert str(tmp_path / "config.json") in msg
    assert "memory.pols is not a setting" in msg


def test_enabled_must_be_a_bool(tmp_path: Path) -> None:
    """enabled: "yes" is refused, naming the field."""
    msg = settings_error(tmp_path, {"enabled": "yes"})
    assert str(tmp_path / "config.json") in msg
    assert "memory.enabled" in msg


@pytest.mark.parametrize(("key", "value"), [("private", "postgres"), ("private", "none"), ("global", "redis")])
def test_unknown_backend_is_refused(tmp_path: Path, key: str, value: str) -> None:
    """Backends outside the allowed list are refused, naming the field and the choices."""
    msg = settings_error(tmp_path, {key: value})
    assert str(tmp_path / "config.json") in msg
    assert f"memory.{key} must be one of" in msg


def test_backend_of_wrong_type_is_refused(tmp_path: Path) -> None:
    """A backend given as a list is refused like an unknown name."""
    assert "memory.global" in settings_error(tmp_path, {"global": ["sqlite"]})


@pytest.mark.parametrize("pools", ["team-research", {"team": True}, [1], [""], ["  "], None])
def test_pools_must_be_a_list_of_names(tmp_path: Path, pools: Any) -> None:
    """pools must be a list of non-empty strings."""
    msg = settings_error(tmp_path, {"pools": pools})
    assert str(tmp_path / "config.json") in msg
    assert "memory.pools" in msg


def test_pool_name_the_router_would_refuse_is_refused_here(tmp_path: Path) -> None:
    """A pool name with a control character is refused at load time, naming the file."""
    msg = settings_error(tmp_path, {"pools": ["team\x00"]})
    assert str(tmp_path / "config.json") in msg
    assert "memory.pools" in msg


def test_extraction_must_be_an_object(tmp_path: Path) -> None:
    """extraction: a list is refused."""
    assert "memory.extraction must be an object" in settings_error(tmp_path, {"extraction": [0.7]})


def test_unknown_extraction_key_is_refused(tmp_path: Path) -> None:
    """A misspelt extraction setting is refused, naming it."""
    msg = settings_error(tmp_path, {"extraction": {"agent_cap": 0.7}})
    assert str(tmp_path / "config.json") in msg
    assert "memory.extraction.agent_cap is not a setting" in msg


@pytest.mark.parametrize("cap", ["user_confidence_cap", "agent_confidence_cap", "llm_confidence_cap"])
def test_extraction_cap_of_one_is_refused(tmp_path: Path, cap: str) -> None:
    """Automatic capture can never be fully trusted: a cap of 1.0 is refused, naming the file and field."""
    msg = settings_error(tmp_path, {"extraction": {cap: 1.0}})
    assert str(tmp_path / "config.json") in msg
    assert "memory.extraction" in msg
    assert cap in msg


def test_extraction_value_of_wrong_type_is_refused(tmp_path: Path) -> None:
    """A text where a number is expected is refused, naming the field."""
    msg = settings_error(tmp_path, {"extraction": {"max_memory_chars": "lots"}})
    assert "max_memory_chars" in msg


def test_invalid_json_config_names_the_file(tmp_path: Path) -> None:
    """A config.json that is not JSON is refused, naming the file."""
    write_config(tmp_path, '{"memory": {"enabled": true,}}')
    with pytest.raises(UsageError, match="not valid JSON") as info:
        load_settings(tmp_path)
    assert str(tmp_path / "config.json") in str(info.value)


@pytest.mark.parametrize("top", [[], "memory", 3, None])
def test_config_top_level_must_be_an_object(tmp_path: Path, top: Any) -> None:
    """A JSON list (or any non-object) at the top level is refused, naming the file."""
    write_config(tmp_path, json.dumps(top))
    with pytest.raises(UsageError, match="must hold a JSON object") as info:
        load_settings(tmp_path)
    assert str(tmp_path / "config.json") in str(info.value)


@pytest.mark.parametrize("block", [None, [], "on", True])
def test_memory_block_must_be_an_object(tmp_path: Path, block: Any) -> None:
    """A memory block that is not an object is refused, naming the file."""
    msg = settings_error(tmp_path, block)
    assert str(tmp_path / "config.json") in msg
    assert "memory must be an object" in msg


def test_unreadable_config_is_a_usage_error(tmp_path: Path) -> None:
    """A config.json that cannot be read (here a folder) is refused, naming it."""
    (tmp_path / "config.json").mkdir()
    with pytest.raises(UsageError, match="cannot read"):
        load_settings(tmp_path)


def test_parse_prefixes_errors_with_where() -> None:
    """MemorySettings.parse puts the given location in front of the field."""
    with pytest.raises(UsageError, match=r"^somewhere\.enabled must be"):
        MemorySettings.parse({"enabled": 1}, where="somewhere")


# ------------------------------------------------------------------ resilience.json


def test_missing_budgets_file_gives_no_budgets(tmp_path: Path) -> None:
    """No resilience.json: no per-tier budgets (the defaults apply)."""
    assert load_budgets(tmp_path) == {}


def test_budgets_are_keyed_by_tier_name(tmp_path: Path) -> None:
    """private and global keep their names; default_shared is 'shared:*'; pools are 'shared:<name>'."""
    write_budgets(
        tmp_path,
        {
            "private": {"read_timeout_ms": 250, "semantic_timeout_ms": 1500, "write_timeout_ms": 500},
            "global": {"read_timeout_ms": 400},
            "shared": {"team-research": {"read_timeout_ms": 300}},
            "default_shared": {"read_timeout_ms": 400, "write_timeout_ms": 600},
        },
    )
    budgets = load_budgets(tmp_path)
    assert set(budgets) == {"private", "global", "shared:team-research", "shared:*"}
    assert budgets["private"] == TierBudget(read_timeout_ms=250, semantic_timeout_ms=1500, write_timeout_ms=500)
    assert budgets["shared:team-research"].read_timeout_ms == 300
    assert budgets["shared:*"].write_timeout_ms == 600


def test_budget_fields_left_out_keep_their_defaults(tmp_path: Path) -> None:
    """A partial budget fills the rest from TierBudget's defaults."""
    write_budgets(tmp_path, {"global": {"fail_threshold": 5}})
    assert load_budgets(tmp_path)["global"] == TierBudget(fail_threshold=5)


@pytest.mark.parametrize("value", [0, -100])
def test_non_positive_timeout_is_refused(tmp_path: Path, value: int) -> None:
    """A zero or negative timeout is refused, naming the file, the tier and the field."""
    msg = budgets_error(tmp_path, {"private": {"read_timeout_ms": value}})
    assert str(tmp_path / "resilience.json") in msg
    assert "private" in msg
    assert "read_timeout_ms" in msg


def test_bad_pool_budget_names_the_pool(tmp_path: Path) -> None:
    """An invalid budget of one pool names shared.<pool> and the field."""
    msg = budgets_error(tmp_path, {"shared": {"team": {"write_timeout_ms": -1}}})
    assert str(tmp_path / "resilience.json") in msg
    assert "shared.team" in msg
    assert "write_timeout_ms" in msg


@pytest.mark.parametrize(("field", "value"), [("fail_threshold", "3"), ("fail_threshold", 0), ("reset_after_s", -1)])
def test_bad_breaker_setting_names_the_field(tmp_path: Path, field: str, value: Any) -> None:
    """Breaker settings are validated with the budget's own field names."""
    msg = budgets_error(tmp_path, {"default_shared": {field: value}})
    assert str(tmp_path / "resilience.json") in msg
    assert "default_shared" in msg
    assert field in msg


def test_timeout_as_text_is_refused(tmp_path: Path) -> None:
    """A timeout given as a string is refused."""
    assert "read_timeout_ms" in budgets_error(tmp_path, {"global": {"read_timeout_ms": "250"}})


def test_unknown_budget_field_is_refused(tmp_path: Path) -> None:
    """A misspelt budget field is refused, naming it and listing the fields."""
    msg = budgets_error(tmp_path, {"private": {"read_timeout": 250}})
    assert str(tmp_path / "resilience.json") in msg
    assert "private.read_timeout is not a budget field" in msg


def test_unknown_tier_key_is_refused(tmp_path: Path) -> None:
    """A top-level key that is not a tier is refused, naming it and the choices."""
    msg = budgets_error(tmp_path, {"team-research": {"read_timeout_ms": 300}})
    assert str(tmp_path / "resilience.json") in msg
    assert "team-research is not a tier" in msg


def test_shared_must_map_pools_to_budgets(tmp_path: Path) -> None:
    """shared given as a list is refused."""
    assert "must map pool names to budgets" in budgets_error(tmp_path, {"shared": [{"read_timeout_ms": 1}]})


@pytest.mark.parametrize("budget", [None, 250, [250]])
def test_budget_must_be_an_object(tmp_path: Path, budget: Any) -> None:
    """A tier's budget that is not an object is refused, naming the tier."""
    msg = budgets_error(tmp_path, {"global": budget})
    assert str(tmp_path / "resilience.json") in msg
    assert "global must be an object" in msg


def test_invalid_json_budgets_names_the_file(tmp_path: Path) -> None:
    """A resilience.json that is not JSON is refused, naming the file."""
    msg = budgets_error(tmp_path, "{private: 1}")
    assert str(tmp_path / "resilience.json") in msg
    assert "not valid JSON" in msg


@pytest.mark.parametrize("top", [[], "private", 1, None])
def test_budgets_top_level_must_be_an_object(tmp_path: Path, top: Any) -> None:
    """A non-object top level is refused, naming the file."""
    msg = budgets_error(tmp_path, json.dumps(top))
    assert str(tmp_path / "resilience.json") in msg
    assert "must hold a JSON object" in msg
