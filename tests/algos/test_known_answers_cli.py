"""experiments/protocol/known_answers.py types --override / --env-kwargs values as Hydra does."""

import pytest
from experiments.protocol.known_answers import parse_key_values


def test_overrides_are_typed_like_hydra_overrides():
    parsed = parse_key_values(
        ["lr=5e-4", "epsilon_finish=1e-2", "hidden_dim=32", "double_q=false", "gnn_layer=none", "tau=null"]
    )
    assert parsed == {
        "lr": 5e-4,
        "epsilon_finish": 0.01,
        "hidden_dim": 32,
        "double_q": False,
        "gnn_layer": "none",  # a layer name, not None
        "tau": None,
    }
    assert isinstance(parsed["lr"], float) and isinstance(parsed["hidden_dim"], int)


def test_lists_and_quoted_strings():
    assert parse_key_values(["payoffs=[0.8,1.7,2.7,4.0]", "name='5e-4'"]) == {
        "payoffs": [0.8, 1.7, 2.7, 4.0],
        "name": "5e-4",
    }
    assert parse_key_values([]) == {}


@pytest.mark.parametrize("item", ["lr", "=5e-4"])
def test_an_item_without_key_and_value_is_refused(item):
    with pytest.raises(ValueError, match="key=value"):
        parse_key_values([item])
