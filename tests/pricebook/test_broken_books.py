"""A broken pricebook is refused with an error naming the file, the entry and the field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pricebook.errors import PricebookError
from pricebook.loader import load_dir
from tests.pricebook.conftest import edit_yaml

Editor = Callable[[str, str, str, Callable[[dict[str, Any]], Any]], None]


def _refused(book_dir: Path) -> PricebookError:
    with pytest.raises(PricebookError) as caught:
        load_dir(book_dir)
    return caught.value


def _assert_names(error: PricebookError, file: str, entry_id: str, field: str) -> None:
    assert Path(error.file).name == file
    assert error.entry == entry_id
    assert error.field == field
    message = str(error)
    assert file in message
    assert entry_id in message
    assert field in message


def test_the_unbroken_copy_loads(book_dir: Path) -> None:
    assert load_dir(book_dir).gpus


def test_unparseable_yaml(book_dir: Path) -> None:
    path = book_dir / "offers.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n  - id: [unclosed\n", encoding="utf-8")
    error = _refused(book_dir)
    assert Path(error.file).name == "offers.yaml"
    assert "unparseable YAML" in error.reason
    assert "line" in error.reason


def test_duplicate_key_inside_one_entry_is_unparseable(book_dir: Path) -> None:
    path = book_dir / "book.yaml"
    path.write_text('version: "1"\nversion: "2"\n', encoding="utf-8")
    error = _refused(book_dir)
    assert Path(error.file).name == "book.yaml"
    assert "duplicate key 'version'" in error.reason


def test_missing_field(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "h100-sxm", lambda e: e.pop("memory_gb"))
    error = _refused(book_dir)
    _assert_names(error, "gpus.yaml", "h100-sxm", "memory_gb")
    assert "missing" in error.reason


def test_missing_source_is_refused(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("models.yaml", "models", "microsoft/phi-4", lambda e: e.pop("source"))
    _assert_names(_refused(book_dir), "models.yaml", "microsoft/phi-4", "source")


def test_negative_offer_price(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("offers.yaml", "offers", "h100-sxm.od.aws-p5", lambda e: e.update(price="-6.88 USD"))
    error = _refused(book_dir)
    _assert_names(error, "offers.yaml", "h100-sxm.od.aws-p5", "price")
    assert "positive" in error.reason


def test_negative_host_cost(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry(
        "servers.yaml",
        "servers",
        "hgx-h100-8gpu",
        lambda e: e.update(host_cost={"amount": "-1", "currency": "USD"}),
    )
    _assert_names(_refused(book_dir), "servers.yaml", "hgx-h100-8gpu", "host_cost")


def test_negative_spec_number_is_refused_by_the_schema(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "l4", lambda e: e.update(tdp_w=-72))
    _assert_names(_refused(book_dir), "gpus.yaml", "l4", "tdp_w")


def test_unknown_gpu_in_an_offer(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("offers.yaml", "offers", "l4.od.runpod-secure", lambda e: e.update(gpu="l5"))
    error = _refused(book_dir)
    _assert_names(error, "offers.yaml", "l4.od.runpod-secure", "gpu")
    assert "'l5'" in error.reason


def test_unknown_server_in_an_offer(book_dir: Path, edit_entry: Editor) -> None:
    offer_id = "hgx-h200-8gpu.buy-server.archive-2025"
    edit_entry("offers.yaml", "offers", offer_id, lambda e: e.update(server="hgx-h300-8gpu"))
    _assert_names(_refused(book_dir), "offers.yaml", "hgx-h200-8gpu.buy-server.archive-2025", "server")


def test_unknown_gpu_in_a_server(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("servers.yaml", "servers", "pcie-l4-8gpu", lambda e: e.update(gpu="l4-pcie"))
    _assert_names(_refused(book_dir), "servers.yaml", "pcie-l4-8gpu", "gpu")


def test_unknown_model_in_an_api_price(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("api_prices.yaml", "api_prices", "groq.qwen3-32b", lambda e: e.update(model="Qwen/Qwen3-33B"))
    _assert_names(_refused(book_dir), "api_prices.yaml", "groq.qwen3-32b", "model")


def test_duplicate_id_across_files(book_dir: Path) -> None:
    duplicate = (book_dir / "offers.yaml").read_text(encoding="utf-8")
    # The same offers again in a second file: the first repeated id is reported, in the second file.
    (book_dir / "offers_more.yaml").write_text(duplicate, encoding="utf-8")
    error = _refused(book_dir)
    assert Path(error.file).name == "offers_more.yaml"
    assert error.field == "id"
    assert "duplicate" in error.reason
    assert "offers.yaml" in error.reason


def test_alias_colliding_with_another_gpus_id(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "h100-pcie", lambda e: e["aliases"].append("H100_SXM"))
    error = _refused(book_dir)
    _assert_names(error, "gpus.yaml", "h100-pcie", "aliases")
    assert "h100-sxm" in error.reason


def test_model_alias_colliding_with_another_model(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("models.yaml", "models", "Qwen/Qwen3-14B", lambda e: e["aliases"].append("qwen3-8b"))
    _assert_names(_refused(book_dir), "models.yaml", "Qwen/Qwen3-14B", "aliases")


def test_misspelt_estimated_field(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "b300", lambda e: e.update(estimated_fields=["l2mb"]))
    error = _refused(book_dir)
    _assert_names(error, "gpus.yaml", "b300", "estimated_fields")
    assert "'l2mb'" in error.reason


def test_reserved_offer_without_a_term(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("offers.yaml", "offers", "h100-sxm.rsv36.aws-p5", lambda e: e.pop("term_months"))
    _assert_names(_refused(book_dir), "offers.yaml", "h100-sxm.rsv36.aws-p5", "term_months")


def test_missing_version(book_dir: Path) -> None:
    (book_dir / "book.yaml").unlink()
    error = _refused(book_dir)
    assert (error.entry, error.field) == ("book", "version")


def test_unknown_top_level_key(book_dir: Path) -> None:
    (book_dir / "extra.yaml").write_text("gpu:\n  - id: x\n", encoding="utf-8")
    error = _refused(book_dir)
    assert (Path(error.file).name, error.field) == ("extra.yaml", "gpu")


def test_site_given_twice(book_dir: Path) -> None:
    (book_dir / "site2.yaml").write_text(
        (book_dir / "site.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    error = _refused(book_dir)
    assert (Path(error.file).name, error.entry) == ("site2.yaml", "site")


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(PricebookError, match=r"no \*\.yaml files"):
        load_dir(tmp_path)


def test_a_book_without_gpus(book_dir: Path) -> None:
    (book_dir / "gpus.yaml").write_text("gpus: []\n", encoding="utf-8")
    for name in ("servers.yaml", "offers.yaml"):
        (book_dir / name).unlink()  # they reference GPUs
    error = _refused(book_dir)
    assert (error.entry, error.reason) == ("gpus", "missing: no file lists any GPU")


def _rental_only(entry: dict[str, Any]) -> None:
    entry["rental_only"] = True


def test_a_rental_only_gpu_cannot_be_bought(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "l4", _rental_only)
    error = _refused(book_dir)
    assert Path(error.file).name == "offers.yaml" and error.field == "kind"
    assert error.entry.startswith("l4.") and "rental_only" in error.reason


def _without_purchases(gpu_id: str) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data["offers"] = [
            o
            for o in data["offers"]
            if not (o["gpu"] == gpu_id and o["kind"] not in ("reserved", "on_demand"))
        ]

    return change


def test_a_rental_only_gpu_lives_in_no_server(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "l4", _rental_only)
    edit_yaml(book_dir / "offers.yaml", _without_purchases("l4"))
    error = _refused(book_dir)
    assert Path(error.file).name == "servers.yaml" and error.field == "gpu" and "l4" in error.reason


def test_a_rental_only_gpu_needs_a_rental_offer(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "l4", _rental_only)
    edit_yaml(
        book_dir / "offers.yaml",
        lambda data: data.update(offers=[o for o in data["offers"] if o["gpu"] != "l4"]),
    )
    edit_yaml(
        book_dir / "servers.yaml",
        lambda data: data.update(servers=[s for s in data["servers"] if s["gpu"] != "l4"]),
    )
    _assert_names(_refused(book_dir), "gpus.yaml", "l4", "rental_only")


def test_a_rental_only_gpu_with_only_rentals_loads(book_dir: Path, edit_entry: Editor) -> None:
    edit_entry("gpus.yaml", "gpus", "l4", _rental_only)
    edit_yaml(book_dir / "offers.yaml", _without_purchases("l4"))
    edit_yaml(
        book_dir / "servers.yaml",
        lambda data: data.update(servers=[s for s in data["servers"] if s["gpu"] != "l4"]),
    )
    book = load_dir(book_dir)
    assert next(g for g in book.gpus if g.id == "l4").rental_only
    assert {o.kind.value for o in book.offers if o.gpu == "l4"} <= {"reserved", "on_demand"}
