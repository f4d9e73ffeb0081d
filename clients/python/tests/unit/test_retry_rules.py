"""Every example case of retry_rules.json, the table the TypeScript SDK's test reads too."""

from typing import Any

import grpc
import pytest

from scylla_loader.retry import RETRY_RULES, is_retryable, load_retry_table

TABLE = load_retry_table()


@pytest.mark.parametrize(
    "case", TABLE["cases"], ids=lambda case: f"{case['code']}: {case['details']}"
)
def test_decides_each_case_of_the_shared_table(case: dict[str, Any]) -> None:
    code = grpc.StatusCode[case["code"]]
    allowed = case.get("retryOnResourceExhausted", True)
    assert is_retryable(code, case["details"], allowed) is case["expected"]


def test_every_rule_is_loaded_and_says_why() -> None:
    assert len(RETRY_RULES) == len(TABLE["rules"])
    assert all(row["why"].strip() for row in TABLE["rules"])


def test_a_code_without_a_rule_is_not_retried() -> None:
    assert not is_retryable(grpc.StatusCode.ABORTED, "x", retry_on_resource_exhausted=True)
