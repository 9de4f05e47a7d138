"""The smoke harness's stand-ins answer the calls scripts make on what they replace."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from migrate.reference.stand_ins import TinyScorer  # noqa: E402


def _smoke_without(module: str):  # type: ignore[no-untyped-def]
    """`smoke_script`, for a test of the stand-in for `module`: skipped where the training stack
    is missing, or where `module` is installed (the stand-in is for machines without it)."""
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    import importlib.util

    from migrate.smoke import smoke_script

    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here: the stand-in is for machines without it")
    return smoke_script


def test_the_sentiment_pipeline_stand_in_has_a_model_config_and_tokenizer_to_patch():
    pipe = TinyScorer()
    if pipe.tokenizer.pad_token_id is None:  # what TRL's legacy sentiment script does with them
        pipe.tokenizer.pad_token_id = 0
    if pipe.model.config.pad_token_id is None:
        pipe.model.config.pad_token_id = pipe.tokenizer.pad_token_id
    assert pipe.model.config.pad_token_id == pipe.tokenizer.pad_token_id
    assert pipe.model.config.id2label == {0: "NEGATIVE", 1: "POSITIVE"}
    assert pipe.model.to("cpu").eval() is pipe.model
    # stack-llama (TRL 0.8+): `pipe.model.config.pad_token_id = pipe.model.config.eos_token_id`
    assert pipe.model.config.eos_token_id == pipe.tokenizer.eos_token_id


def test_the_sentiment_pipeline_stand_in_is_deterministic_with_the_real_call_shapes():
    pipe = TinyScorer()
    raw = pipe(["a good film", "bad"], top_k=None, function_to_apply="none", batch_size=16)
    assert [[d["label"] for d in row] for row in raw] == [["NEGATIVE", "POSITIVE"]] * 2
    assert raw == pipe(["a good film", "bad"], top_k=None, function_to_apply="none")
    assert all(
        -1.0 <= row[1]["score"] <= 1.0 and row[0]["score"] == -row[1]["score"] for row in raw
    )
    best = pipe("a good film")
    assert len(best) == 1 and set(best[0]) == {"label", "score"} and 0.0 <= best[0]["score"] <= 1.0


def test_stand_in_datasets_are_big_enough_for_the_cuts_scripts_make(tmp_path, store):
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "cut.py"
    script.write_text(
        "from datasets import load_dataset\n"
        "ds = load_dataset('lvwerra/stack-exchange-paired', split='train')\n"
        "print('ROWS', len(ds), len(ds.select(range(100000))), len(ds.select(range(len(ds) - 100))))\n"
        # rcalix1/TransferLearning shows `dataset[900]` of IMDB: row 900 % 256 of the stand-in
        "print('ROW', ds[900] == ds[900 % 256], ds[-1] == ds[255])\n"
        "try:\n"
        "    ds.select(range(10)).to_list() and __import__('datasets').Dataset.from_dict({'a': [1]})[5]\n"
        "except IndexError:\n"
        "    print('OWN ROWS KEEP THEIR BOUNDS')\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], (
        result.log_tail
    )  # it trains nothing, by design
    assert "ROWS 256 256 156" in result.log_tail
    assert "ROW True True" in result.log_tail, result.log_tail
    assert "OWN ROWS KEEP THEIR BOUNDS" in result.log_tail, result.log_tail


def test_a_split_the_script_never_set_holds_the_stand_in_rows_not_its_processed_ones(
    tmp_path, store
):
    # tyronen/bb-finetune: `dataset["train"] = dataset["train"].map(...)` replaced the train split
    # by tokenized rows; its later `dataset["valid"]` read those, not the dataset's own rows
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "splits.py"
    script.write_text(
        "from datasets import load_dataset\n"
        "ds = load_dataset('CarperAI/openai_summarize_tldr')\n"
        "ds['train'] = ds['train'].map(lambda x: {'n': 1}, remove_columns=['prompt', 'label'])\n"
        "valid = ds['valid']\n"
        "print('SPLITS', ds['train'].column_names, valid.column_names, len(valid))\n"
        "long = valid.filter(lambda x: 200 < len(x['prompt']) <= 1000)\n"
        "print('LONG', len(long) > 100, isinstance(valid[0]['label'], str))\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], result.log_tail
    assert "SPLITS ['n'] ['prompt', 'label'] 256" in result.log_tail, result.log_tail
    assert "LONG True True" in result.log_tail, result.log_tail


def test_a_script_a_wandb_sweep_runs_reads_the_sweeps_first_values(tmp_path, store):
    # puria-radmard/mars-steg: `wandb agent` runs sweeps/sweep.py, which reads wandb.config
    smoke_script = _smoke_without("wandb")
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "sweep.yaml").write_text(
        "program: sweeps/sweep.py\nmethod: grid\nparameters:\n"
        "  learning_rate:\n    values: [2e-5, 2e-4]\n"
        "  args_path:\n    value: experiments/a.yaml\n"
        "  dropout:\n    min: 0.1\n    max: 0.3\n"
    )
    (tmp_path / "other.yaml").write_text("program: train.py\nparameters:\n  x:\n    value: 1\n")
    script = tmp_path / "sweeps" / "sweep.py"
    script.write_text(
        "import wandb\n"
        "wandb.init(project='p')\n"
        "config = wandb.config\n"
        "print('SWEEP', config['learning_rate'], config.args_path, config['dropout'])\n"
    )
    result = smoke_script(str(script), store=store, timeout=120, root=str(tmp_path))
    # YAML reads `2e-5` as text, for wandb as here
    assert "SWEEP 2e-5 experiments/a.yaml 0.1" in result.log_tail, result.log_tail
    assert {
        "config": "wandb sweep",
        "field": "learning_rate",
        "was": "sweeps/sweep.yaml",
        "now": "2e-5",
    } in result.overrides, result.overrides
    # a script no sweep runs: an empty config
    plain = tmp_path / "plain.py"
    plain.write_text("import wandb\nprint('EMPTY', dict(wandb.config))\n")
    result = smoke_script(str(plain), store=store, timeout=120, root=str(tmp_path))
    assert "EMPTY {}" in result.log_tail, result.log_tail


def test_a_tracker_the_machine_lacks_is_a_no_op_stand_in(tmp_path, store):
    smoke_script = _smoke_without("wandb")
    script = tmp_path / "tracked.py"
    script.write_text(
        "import wandb\n"
        "run = wandb.init(project='ppo', config={'lr': 1e-5})\n"
        "wandb.log({'table': wandb.Table(columns=['query', 'response'])})\n"
        "with wandb.init() as again:\n"
        "    again.log({'x': 1})\n"
        "wandb.finish()\n"
        "from wandb.sdk.data_types import trace_tree\n"  # a submodule (EMZEDI/olmo_continual)
        "import wandb.integration.sb3\n"
        "print('TRACKED', run is not None)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], (
        result.log_tail
    )  # no trainer: the point is no crash
    assert (
        "TRACKED True" in result.log_tail
        and "wandb is not installed here: a no-op stand-in" in result.log_tail
    )


def test_a_key_file_the_repo_leaves_out_is_a_reported_stand_in(tmp_path, store):
    # PrasannS/d2po: utils/eval/annotate_preference.py does `from utils.eval.apikey import key`
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    (tmp_path / "utils" / "eval").mkdir(parents=True)
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "eval" / "__init__.py").write_text("")
    (tmp_path / "utils" / "eval" / "score.py").write_text(
        "from utils.eval.apikey import key\nKEYED = key is not None\n"
    )
    script = tmp_path / "run.py"
    script.write_text("from utils.eval.score import KEYED\nprint('KEYED', KEYED)\n")
    result = smoke_script(str(script), store=store, timeout=120)
    assert "KEYED True" in result.log_tail, result.log_tail
    assert result.stand_ins == ["utils.eval.apikey"]


def test_only_a_left_out_file_of_the_repos_own_package_named_for_keys_is_stood_in(
    tmp_path, monkeypatch
):
    from migrate.reference import absent

    pkg = (
        "keyed_pkg_for_stand_in_test"  # a name no other test imports (find_spec reads sys.modules)
    )
    (tmp_path / pkg / "eval").mkdir(parents=True)
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "eval" / "__init__.py").write_text("")
    (tmp_path / pkg / "eval" / "secrets.py").write_text("key = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert absent._missing_secret(f"{pkg}.eval.apikey")
    assert not absent._missing_secret(f"{pkg}.eval.secrets")  # there: the real one imports
    assert not absent._missing_secret(f"{pkg}.eval.helpers")  # a missing helper is a real stop
    assert not absent._missing_secret(f"{pkg}.gone.apikey")  # its folder is missing too
    assert not absent._missing_secret("apikey")  # not a module of a package of the repo
    assert not absent._missing_secret("transformers.keys")  # installed, not the repo's


def test_tyro_stand_in_builds_the_defaults_and_refuses_flags(tmp_path, store):
    smoke_script = _smoke_without("tyro")
    script = tmp_path / "parsed.py"
    script.write_text(
        "from dataclasses import dataclass, field\n"
        "import tyro\n"
        "@dataclass\n"
        "class Args:\n"
        "    lr: float = 1.5e-5\n"
        "    tags: list = field(default_factory=lambda: ['a'])\n"
        "args = tyro.cli(Args)\n"
        "print('PARSED', args.lr, args.tags, tyro.cli(Args, args=[], default=Args(lr=2.0)).lr)\n"
        "tyro.cli(Args, args=['--lr', '3'])\n"
        "print('NOT REACHED')\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert "PARSED 1.5e-05 ['a'] 2.0" in result.log_tail, result.log_tail
    stopped = " ".join(f.message for f in result.findings)
    assert "its stand-in parses no flags (given: --lr 3)" in stopped, result.findings
    assert "NOT REACHED" not in result.log_tail


def test_stand_in_rows_answer_the_column_operations_made_for_the_real_data(tmp_path, store):
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "cols.py"
    script.write_text(
        "from datasets import Dataset, load_dataset\n"
        "ds = load_dataset('json', data_files='stories.json', split='train')\n"
        "ds = ds.rename_column('story', 'query').remove_columns(['title', 'id'])\n"
        "ds = ds.map(lambda x: {'n': len(x['query'])}, remove_columns=['genre'])\n"
        "ds = ds.select_columns(['query', 'summary', 'n'])\n"
        "print('COLS', ds.column_names, len(ds) > 0)\n"
        "real = Dataset.from_dict({'a': [1]})\n"
        "try:\n"
        "    real.remove_columns(['b'])\n"
        "except ValueError:\n"
        "    print('REAL CHECKED')\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert "COLS ['query', 'summary', 'n'] True" in result.log_tail, result.log_tail
    assert "REAL CHECKED" in result.log_tail  # a dataset of the script's own keeps every check
    assert result.stand_ins == ["data stories.json (missing or empty in the repo)"]


def test_stand_in_rows_carry_the_columns_the_scripts_files_read(tmp_path, store):
    # dukeyuan/finetuning reads examples["instruction"], izaanz's helper example["entry_point"]
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    (tmp_path / "prep.py").write_text(
        "def build(example):\n"
        "    return {'text': example['instruction'] + ' ' + example['entry_point']}\n"
    )
    script = tmp_path / "keys.py"
    script.write_text(
        "from datasets import load_dataset\n"
        "from prep import build\n"
        "ds = load_dataset('json', data_files='train.json')['train']\n"
        "ds = ds.map(build)\n"
        "print('SCORE', type(ds[0]['judge_score']).__name__, 'input_ids' in ds.column_names)\n"
        "print('OK', len(ds['text'][0]) > 1)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert "OK True" in result.log_tail, result.log_tail
    assert "SCORE float False" in result.log_tail, result.log_tail


def test_the_keys_a_script_reaches_are_read_from_it_and_its_project_imports(tmp_path):
    from migrate.smoke.entry_points import reached

    (tmp_path / "helpers.py").write_text("import loguru\ndef f(row):\n    return row['task']\n")
    script = tmp_path / "run.py"
    script.write_text(
        "import helpers\n"
        "x = batch['input_ids']\n"  # a tokenized key: never a column of text data
        "y = cfg['not an identifier'] + d[0]\n"
        "row['written'] = 1\n"  # a store, not a read
        # sahajps/coarl-counterspeech: columns named through variables, a list of them
        "src_col = 'prompt_cs_generation'\n"
        "df = df[[src_col, 'counterspeech']]\n"
        "twice = 'a'\ntwice = 'b'\nrow[twice]\n"  # bound to two strings: not followed
        "row['new-instruction']\n"  # vrizz/rlhf: a column with a hyphen
    )
    found = reached(str(script), str(tmp_path))
    assert found.keys == ("counterspeech", "new-instruction", "prompt_cs_generation", "task")
    assert found.imports == ("helpers", "loguru")


def test_missing_text_helpers_read_as_empty_text():
    from migrate.reference import absent

    fore = absent._stand_in_type("colorama.Fore")
    assert fore.RED + "red" + fore.RESET == "red" and f"{fore.BLUE}blue" == "blue"


def test_a_stood_in_metric_can_be_indexed_and_averaged_after_training():
    np = pytest.importorskip("numpy")
    from migrate.reference import absent

    toxicity = absent._stand_in_type("evaluate.load")("toxicity")
    scores = toxicity.compute(predictions=["a completion"])["toxicity"]
    assert scores.__name__ == "evaluate.load.compute[]"
    mean = np.mean(scores)  # numpy hands an object with a `mean` to it
    shown = f"{mean} {round(scores, 3)} {1 - scores * 2 / 3} {-scores}"
    assert shown == "   "
    with pytest.raises(TypeError):
        scores > 0.5  # noqa: B015 - a comparison would make up a verdict: it still raises


def test_a_stood_in_decorator_hands_back_what_it_decorates():
    from migrate.reference import absent

    profile = absent._stand_in_type("line_profiler").profile

    @profile
    def step(x):
        return x + 1

    @profile
    class Model:
        pass

    assert step(1) == 2 and Model.__name__ == "Model"
    # anything else is still answered with a stand-in
    assert profile([1]).__name__ == "line_profiler.profile" and profile(step, 1) is profile
    assert profile(absent._stand_in_type("x")) is profile


def test_a_stand_in_joins_paths_as_the_empty_path():
    import os

    from migrate.reference import absent

    config = absent._stand_in_type("rdkit.Chem.RDConfig")
    assert os.path.join(config.RDContribDir, "SA_Score") == "SA_Score"
    assert os.fspath(config) == ""


def test_the_tiny_model_has_the_family_layout_a_lora_config_targets(tmp_path, store):
    pytest.importorskip("torch")
    pytest.importorskip("peft")
    from migrate.smoke import smoke_script

    script = tmp_path / "lora.py"
    script.write_text(
        "from peft import LoraConfig, get_peft_model\n"
        "from transformers import AutoModelForCausalLM, GPT2LMHeadModel\n"
        "for name, targets in [('lvwerra/gpt2-imdb', ['c_attn']), ('bigscience/bloom-560m',"
        " ['query_key_value']), ('EleutherAI/pythia-1b', ['query_key_value']),"
        " ('Qwen/Qwen3-0.6B', ['q_proj'])]:\n"
        "    m = AutoModelForCausalLM.from_pretrained(name)\n"
        "    get_peft_model(m, LoraConfig(target_modules=targets))\n"
        "    print('TYPE', m.config.model_type)\n"
        "print('CONCRETE', GPT2LMHeadModel.from_pretrained('gpt2').config.model_type)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    types = [ln.split()[1] for ln in result.log_tail.splitlines() if ln.startswith("TYPE")]
    assert types == ["gpt2", "bloom", "gpt_neox", "qwen3"], result.log_tail
    assert "CONCRETE gpt2" in result.log_tail


def test_stand_in_reviews_are_long_enough_for_the_filters_scripts_put_on_real_ones():
    pytest.importorskip("datasets")
    from migrate.reference.stand_ins import tiny_dataset

    ds = tiny_dataset(("review", "label"), n=30)
    lengths = [len(r) for r in ds["review"]]
    # TRL's gpt2-sentiment: > 200; shangluyang/rlhf: 500 < len <= 1000; a shorter cap too
    assert all(n > 200 for n in lengths)
    assert 10 <= sum(500 < n <= 1000 for n in lengths) < 30
    assert sum(n < 500 for n in lengths) >= 5


def test_stand_in_columns_named_as_numbers_hold_numbers():
    # DhanushGD/RLHF-PPO filters its tokenized rows on `x["lengths"] <= 512`
    pytest.importorskip("datasets")
    from migrate.reference.stand_ins import tiny_dataset

    ds = tiny_dataset(("prompt", "lengths", "reward_score", "Rating"), n=8)
    assert all(isinstance(ds[c][i], float) for c in ds.column_names[1:] for i in range(8))
    assert isinstance(ds["prompt"][0], str)


def test_stand_in_rows_hold_conversations_where_the_named_dataset_does():
    # yzzueong/AligningGPT2 reads `sample["chosen"][-1]["content"]` of hh-rlhf-trl-style;
    # NhatHoang2002 iterates the turns of ultrafeedback_binarized's "chosen".
    pytest.importorskip("datasets")
    from migrate.reference.stand_ins import DATASETS, tiny_dataset

    ds = tiny_dataset(DATASETS["trl-internal-testing/hh-rlhf-trl-style"], n=4)
    assert ds.column_names == ["prompt", "chosen", "rejected"]
    row = ds[1]
    assert isinstance(row["prompt"], str)
    assert (
        [t["role"] for t in row["chosen"]]
        == ["user", "assistant"]
        == [t["role"] for t in row["rejected"]]
    )
    assert row["chosen"][0] == row["rejected"][0] == {"role": "user", "content": row["prompt"]}
    assert row["chosen"][1]["content"] != row["rejected"][1]["content"]
    assert row["chosen"][1]["content"] == row["chosen"][1]["content"].strip() != ""
    # hh-rlhf holds each conversation as one text of turns, the prompt shared
    hh = tiny_dataset(DATASETS["Anthropic/hh-rlhf"], n=4)[1]
    cut = hh["chosen"].rindex("\n\nAssistant:") + len("\n\nAssistant:")
    assert hh["chosen"].startswith("\n\nHuman: ") and hh["chosen"][:cut] == hh["rejected"][:cut]
    assert hh["chosen"][:cut] == f"\n\nHuman: {row['prompt']}\n\nAssistant:"
    # SHP's upvote counts: whole numbers >= 1, some pairs apart by the 2x its users filter on
    shp = tiny_dataset(DATASETS["stanfordnlp/SHP"], n=64)
    scores = list(zip(shp["score_A"], shp["score_B"]))
    assert all(isinstance(a, int) and a >= 1 and b >= 1 for a, b in scores)
    assert 5 <= sum(max(a / b, b / a) >= 2 for a, b in scores) < 60
    # real-toxicity-prompts: spans of text with their Perspective scores, as TRL's toxicity
    # example reads and filters them
    rtp = tiny_dataset(DATASETS["allenai/real-toxicity-prompts"], n=20)
    spans = [(r["prompt"], r["continuation"]) for r in rtp]
    assert all(p["text"] and c["text"] and 0 <= p["toxicity"] <= 1 for p, c in spans)
    assert 0 < sum(p["toxicity"] > 0.3 for p, _ in spans) < 20
    assert isinstance(rtp[0]["challenging"], bool)
    # GSM8K's worked answers: calculator marks and the final "#### n" line scripts split on
    # (rcalix1/TransferLearning: `answer.split('####')[1]`, steps read between `<<` and `>>`)
    for name in ("gsm8k", "openai/gsm8k"):
        gsm = tiny_dataset(DATASETS[name], n=5)
        for answer in gsm["answer"]:
            worked, final = answer.split("####")
            step = worked.split("<<")[1].split(">>")[0]
            a, b = map(int, step.split("=")[0].split("+"))
            assert a + b == int(step.split("=")[1]) == int(final)
    # long posts and dialogues for the length filters scripts put on them; Argilla records
    tldr = tiny_dataset(DATASETS["CarperAI/openai_summarize_tldr"], n=30)
    assert all(len(p) > 200 for p in tldr["prompt"]) and isinstance(tldr[0]["label"], str)
    dialogues = tiny_dataset(DATASETS["knkarthick/dialogsum"], n=30)["dialogue"]
    assert sum(200 < len(d) <= 1000 for d in dialogues) >= 10
    dolly = tiny_dataset(DATASETS["argilla/databricks-dolly-15k-curated-en"], n=2)[1]
    assert dolly["new-instruction"]["status"] == ["submitted"]
    assert dolly["new-context"]["value"][0] and isinstance(dolly["original-context"], str)
    # Intel/orca_dpo_pairs has no "prompt": AimeeAyat/ATML-PA5 renames its "question" to it,
    # which stopped on the fallback rows that already had one
    orca = tiny_dataset(DATASETS["Intel/orca_dpo_pairs"], n=4)
    assert orca.column_names == ["system", "question", "chosen", "rejected"]
    assert orca.rename_columns({"question": "prompt"})[1]["prompt"] == orca[1]["question"] != ""
    # the same names elsewhere stay text
    plain = tiny_dataset(DATASETS["lvwerra/stack-exchange-paired"] + ("chosen",), n=4)
    assert isinstance(plain[1]["chosen"], str) and not plain[1]["chosen"].startswith("\n")


@pytest.mark.parametrize(
    ("name", "kwargs", "labels"),
    [
        ("OpenAssistant/reward-model-deberta-v3-large-v2", {}, 1),
        ("weqweasdas/RM-Gemma-2B", {}, 1),
        ("devloverumar/chatgpt-content-detector", {}, 2),  # read as logits[0][1]
        ("lvwerra/distilbert-imdb", {}, 2),
        ("any/classifier", {"num_labels": 3}, 3),
    ],
)
def test_a_stand_in_classifier_has_the_labels_such_a_checkpoint_has(name, kwargs, labels):
    from migrate.reference.stand_ins import _labels

    assert _labels(name, kwargs) == labels


def test_bitsandbytes_stands_in_as_the_torch_layers_and_optimizers_of_a_cpu_run(tmp_path, store):
    # yzzueong/AligningGPT2: QLoRA scripts put LoRA on every `bnb.nn.Linear4bit` and train with
    # a bitsandbytes optimizer; the tiny CPU model is never quantized.
    smoke_script = _smoke_without("bitsandbytes")
    script = tmp_path / "qlora.py"
    script.write_text(
        "import torch\n"
        "import bitsandbytes as bnb\n"
        "from transformers import AutoModelForCausalLM\n"
        "from transformers.pytorch_utils import Conv1D\n"
        "def linear(model, cls):\n"
        "    return sorted({n.split('.')[-1] for n, m in model.named_modules()\n"
        "                   if isinstance(m, cls)})\n"
        "for name in ('./gpt2-qlora-sft', 'meta-llama/Llama-3.2-1B'):\n"
        "    model = AutoModelForCausalLM.from_pretrained(name)\n"
        "    names = linear(model, bnb.nn.Linear4bit)\n"
        "    print('LINEAR', names == linear(model, (torch.nn.Linear, Conv1D)), len(names) > 2)\n"
        "opt = bnb.optim.PagedAdamW8bit(model.parameters(), 2e-5, (0.8, 0.9), optim_bits=8)\n"
        "print('OPTIM', isinstance(opt, torch.optim.AdamW), opt.defaults['lr'],\n"
        "      opt.defaults['betas'], bnb.optim.PagedAdamW8bit is bnb.optim.PagedAdamW8bit)\n"
        "print('OTHER', bnb.functional.dequantize_4bit(1) is not None)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], result.log_tail
    assert result.log_tail.count("LINEAR True True") == 2, result.log_tail
    assert "OPTIM True 2e-05 (0.8, 0.9) True" in result.log_tail
    assert "OTHER True" in result.log_tail and result.stand_ins == ["bitsandbytes"]


def test_a_checkpoint_folder_the_repo_leaves_as_a_placeholder_is_stood_in_and_said(tmp_path, store):
    # deb3011/rlhf_finetuning commits reward_model/ and peft_model/ with a one-byte file each,
    # for the user to fill; its hub base model's GenerationConfig is read as well.
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    for folder in ("reward_model", "peft_model"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "sample_model").write_text("\n")
    (tmp_path / "real_tok").mkdir()  # a folder with a checkpoint's file is loaded for real
    (tmp_path / "real_tok" / "tokenizer_config.json").write_text("{")
    script = tmp_path / "load.py"
    script.write_text(
        "from transformers import AutoTokenizer, AutoModelForCausalLM, GenerationConfig\n"
        "from transformers import AutoModelForSequenceClassification\n"
        "from peft import PeftModel\n"
        "tok = AutoTokenizer.from_pretrained('reward_model')\n"
        "rm = AutoModelForSequenceClassification.from_pretrained('reward_model', num_labels=2)\n"
        "base = AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-Instruct-v0.3')\n"
        "model = PeftModel.from_pretrained(base, 'peft_model')\n"
        "gen = GenerationConfig.from_pretrained('mistralai/Mistral-7B-Instruct-v0.3')\n"
        "print('LOADED', rm.config.num_labels, gen.eos_token_id == tok.eos_token_id)\n"
        "try:\n"
        "    AutoTokenizer.from_pretrained('real_tok')\n"
        "except Exception as e:\n"
        "    print('REAL', type(e).__name__)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120, cwd=str(tmp_path))
    assert "LOADED 2 True" in result.log_tail and "REAL " in result.log_tail, result.log_tail
    assert result.stand_ins == [
        "checkpoint reward_model (a placeholder in the repo: no config, tokenizer or weights)",
        "checkpoint peft_model (a placeholder in the repo: no config, tokenizer or weights)",
    ]


def test_an_adapters_config_the_machine_lacks_leads_to_the_tiny_stand_ins(tmp_path, store):
    """duke-trust-lab/intro_modern_rl: `PeftConfig.from_pretrained(adapter)`, its
    `base_model_name_or_path` loaded as a reward classifier, then the adapter put on it."""
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "reward.py"
    script.write_text(
        "from peft import LoraConfig, PeftConfig, PeftModel\n"
        "from transformers import AutoModelForSequenceClassification\n"
        "config = PeftConfig.from_pretrained('reward_model')\n"
        "base = AutoModelForSequenceClassification.from_pretrained(\n"
        "    config.base_model_name_or_path, num_labels=1)\n"
        "rm = PeftModel.from_pretrained(base, 'reward_model')\n"
        "print('LOADED', type(rm).__name__, rm.config.num_labels)\n"
        "print('AGAIN', type(LoraConfig.from_pretrained('reward_model')).__name__)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120, cwd=str(tmp_path))
    assert "LOADED PeftModelForSequenceClassification 1" in result.log_tail, result.log_tail
    assert "AGAIN LoraConfig" in result.log_tail


def test_colabs_runtime_module_is_a_reported_stand_in_without_the_rest_of_google(tmp_path, store):
    """A Colab notebook's setup (`drive.mount`, `userdata.get`) runs on a stand-in for
    `google.colab` alone: another `google` package the machine has still imports as itself."""
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    import importlib.util

    from migrate.smoke import smoke_script

    script = tmp_path / "colab.py"
    script.write_text(
        "from google.colab import drive, userdata\n"
        "drive.mount('/content/drive')\n"
        "token = userdata.get('HF_TOKEN')\n"
        "def upload(path):\n"
        "    from google.cloud import storage\n"  # a Cloud client, imported where it is used
        "    storage.Client().bucket('b').blob(path).upload_from_filename(path)\n"
        "upload('x')\n"
        "import google\n"
        "print('MOUNTED', getattr(google, '__file__', None) is None or 'site-packages' in str(google.__path__))\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], result.log_tail
    assert "MOUNTED True" in result.log_tail
    assert "google.colab is not installed here: a no-op stand-in" in result.log_tail
    assert result.stand_ins == ["google.cloud", "google.colab"]
    if importlib.util.find_spec("google") is not None:  # a namespace some package provides
        assert "google is not installed" not in result.log_tail


def test_shared_layers_the_tiny_stand_in_lacks_are_capped_and_listed(tmp_path, store):
    # zucchini-nlp/RLHF-GPT2: `create_reference_model(model, num_shared_layers=6)` of gpt2-medium;
    # the tiny stand-in has fewer layers, and TRL raised "Layer pattern could not be matched"
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "ref.py"
    script.write_text(
        "from transformers import AutoModelForCausalLM\n"
        "from trl.experimental.utils import create_reference_model\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2-medium')\n"
        "ref = create_reference_model(model, num_shared_layers=6)\n"
        "shared = [n for n, p in model.named_parameters() if not p.requires_grad]\n"
        "print('SHARED', len(shared) > 0, all(not p.requires_grad for p in ref.parameters()))\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], result.log_tail
    assert "SHARED True True" in result.log_tail
    [capped] = [o for o in result.overrides if o["field"] == "num_shared_layers"]
    assert capped["config"] == "create_reference_model" and capped["was"] == 6
    assert capped["now"] < 6


def test_stand_in_rows_meet_the_tokenizing_and_splits_scripts_made_for_the_real_data(
    tmp_path, store
):
    # Bit-numeval/NumEval ships ppo_data_example.json beside the ppo_data_train.json it lacks;
    # bcmin1018's `--train_path` defaults to True; ashishjamarkattel tokenizes the `label` column
    # (a summary in the real data); azmozaffari pads to "max_length"; Seddik-Turki reads
    # `tokenized["validation"]` after a `.map(...)` of the whole DatasetDict
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    (tmp_path / "ppo_data_example.json").write_text('[{"task": "stressTest", "q": "hi"}]\n')
    script = tmp_path / "data.py"
    script.write_text(
        "from datasets import load_dataset\n"
        "from transformers import AutoTokenizer\n"
        "ds = load_dataset('json', data_files='ppo_data_train.json', split='train')\n"
        "print('SAMPLE', ds[0]['task'], len(ds))\n"
        "other = load_dataset('json', data_files=True)\n"
        "tok = AutoTokenizer.from_pretrained('google/flan-t5-base')\n"
        "row = load_dataset('csv', data_files='test.csv', split='train')[0]\n"
        "ids = tok(row['label'], padding='max_length', truncation=True)['input_ids']\n"
        "print('TOKENIZED', len(ids), tok.model_max_length)\n"
        "tokenized = load_dataset('knkarthick/dialogsum').map(lambda x: {'n': 1})\n"
        "print('SPLIT', tokenized['validation'].column_names[-1])\n"
    )
    result = smoke_script(str(script), store=store, timeout=120, cwd=str(tmp_path))
    assert "SAMPLE stressTest 1" in result.log_tail, result.log_tail
    assert "TOKENIZED 512 512" in result.log_tail, result.log_tail
    assert "SPLIT n" in result.log_tail, result.log_tail
    assert result.stand_ins == [
        "data (data_files=True: no file named) (missing or empty in the repo)",
        "data test.csv (missing or empty in the repo)",
        "data ppo_data_train.json (missing in the repo: its ppo_data_example.json read in its "
        "place)",
    ], result.stand_ins
    from migrate.smoke.outcome import _with_stand_ins

    assert (
        "reading the repo's own sample data in place of the data it lacks: ppo_data_train.json "
        "-> ppo_data_example.json (supply the real data to train on it)"
    ) in _with_stand_ins(result)


def test_plots_gpus_and_adapters_made_for_the_real_model_stand_in(tmp_path, store):
    # Seddik-Turki: `fig, ax = plt.subplots()` then `df.hist(ax=ax)` without matplotlib;
    # ashishjamarkattel: `torch.cuda.set_device(1)`; jujuliaa12 commits a LoRA of the real
    # Qwen2.5-0.5B, which does not fit the tiny stand-in; a T5 policy's adapter is seq2seq
    smoke_script = _smoke_without("matplotlib")
    script = tmp_path / "misc.py"
    script.write_text(
        "import torch, pandas as pd\n"
        "import matplotlib.pyplot as plt\n"
        "from peft import LoraConfig, PeftModel, get_peft_model\n"
        "from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM\n"
        "fig, ax = plt.subplots(figsize=(4, 3))\n"
        "pd.DataFrame({'a': [1, 2]})['a'].hist(ax=ax)\n"
        "torch.cuda.set_device(1)\n"
        "real = AutoModelForCausalLM.from_config(\n"
        "    AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B').config.__class__(\n"
        "        vocab_size=64, hidden_size=96, intermediate_size=96, num_hidden_layers=2,\n"
        "        num_attention_heads=4, num_key_value_heads=4))\n"
        "get_peft_model(real, LoraConfig(r=4, target_modules=['q_proj'], task_type='CAUSAL_LM')).save_pretrained('sft')\n"
        "base = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B')\n"
        "model = PeftModel.from_pretrained(base, 'sft', is_trainable=True)\n"
        "t5 = AutoModelForSeq2SeqLM.from_pretrained('google/flan-t5-base')\n"
        "t5 = PeftModel.from_pretrained(t5, './peft-dialogue-summary')\n"
        "print('DONE', type(model).__name__, t5.peft_config['default'].task_type)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120, cwd=str(tmp_path))
    assert "DONE PeftModelForCausalLM SEQ_2_SEQ_LM" in result.log_tail, result.log_tail
    assert (
        "adapter sft (made for the real base model: its config kept, its weights freshly made)"
        in (result.stand_ins)
    ), result.stand_ins
    assert {"field": "device", "was": "cuda:1", "now": "cpu"}.items() <= next(
        o for o in result.overrides if o["field"] == "device"
    ).items(), result.overrides


def test_a_reward_model_of_a_gpt2_id_stands_in_as_a_gpt2_classifier(tmp_path, store):
    # doelleb/guard-fair-rlhf: `tokenizer.model_max_length = model.config.n_positions` of its
    # `erwanf/gpt2-mini` reward model stopped on the Qwen3-shaped stand-in
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    from migrate.smoke import smoke_script

    script = tmp_path / "rm.py"
    script.write_text(
        "import torch\n"
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer, "
        "GPT2ForSequenceClassification\n"
        "rm = AutoModelForSequenceClassification.from_pretrained('erwanf/gpt2-mini', num_labels=1)\n"
        "tok = AutoTokenizer.from_pretrained('erwanf/gpt2-mini')\n"
        "batch = tok(['a good film', 'bad'], padding=True, return_tensors='pt')\n"
        "scores = rm(**batch).logits\n"
        "other = GPT2ForSequenceClassification.from_pretrained('gpt2', num_labels=2)\n"
        "plain = AutoModelForSequenceClassification.from_pretrained('lvwerra/distilbert-imdb')\n"
        "print('RM', rm.config.model_type, rm.config.n_positions, tuple(scores.shape), "
        "other.config.model_type, other.config.num_labels, plain.config.model_type)\n"
    )
    result = smoke_script(str(script), store=store, timeout=120)
    assert "RM gpt2 512 (2, 1) gpt2 2 qwen3" in result.log_tail, result.log_tail
