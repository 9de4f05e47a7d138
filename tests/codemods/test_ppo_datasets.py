"""TRL105 ppo-datasets: no-op, fix, TODO, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("ds = ds.map(tokenize)\n", id="datasets-no-trainer"),
        pytest.param(
            "from trl import RLOOTrainer\nds = ds.map(tok)\nt = RLOOTrainer(model=m, train_dataset=ds)\n",
            id="target-trainer",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=("TRL105",)) == []


def test_legacy_query_column_becomes_prompt():
    before = dedent(
        """
        from trl import PPOTrainer
        def tok(sample):
            sample["input_ids"] = tokenizer.encode(sample["review"])[:8]
            sample["query"] = tokenizer.decode(sample["input_ids"])
            return sample
        ds = ds.map(tok)
        t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    out, findings = run(before, select=("TRL105",))
    assert 'sample["prompt"] = tokenizer.decode(sample["input_ids"])' in out
    assert run(out, select=("TRL105",))[0] == out
    # decoded with its special tokens: a BOS the tokenizer adds again would come twice
    [note] = [f for f in findings if "keeps the special tokens" in f.message]
    assert (note.line, note.severity) == (4, Severity.INFO)
    assert note.message.startswith('`tokenizer.decode(sample["input_ids"])` keeps the special')
    skipped = before.replace(
        'sample["input_ids"])\n', 'sample["input_ids"], skip_special_tokens=True)\n'
    )
    _, findings = run(skipped, select=("TRL105",))
    assert not [f for f in findings if "keeps the special tokens" in f.message]


@pytest.mark.parametrize(
    ("encode", "cut"),
    [
        # SsmallSong/TRL_FT: the ids cut to 128 tokens, the text stored whole as "query"
        pytest.param("tokenizer.encode(text, truncation=True, max_length=128)", "128", id="cut"),
        pytest.param("tokenizer.encode(text)", None, id="whole"),
        pytest.param("tokenizer.encode(other, max_length=128)", None, id="another-text"),
    ],
)
def test_legacy_query_of_the_text_itself_whose_ids_were_cut_gets_the_cut_todo(encode, cut):
    before = dedent(
        f"""
        from trl import PPOTrainer
        def tok(sample):
            text = "<|user|>" + sample["prompt"]
            sample["input_ids"] = {encode}
            sample["query"] = text
            return sample
        ds = ds.map(tok)
        t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    out, findings = run(before, select=("TRL105",))
    assert '    sample["prompt"] = text\n' in out
    stored = [f for f in findings if "stored as" in f.message]
    assert [f.message.split(",")[0] for f in stored] == ['the text is stored as "prompt"']
    todos = [f.message.split(";")[0] for f in findings if f.fix is Fix.MANUAL]
    assert todos == ([f"`tok` cut each prompt to at most {cut} tokens"] if cut else [])
    assert run(out, select=("TRL105",))[0] == out


def test_legacy_query_tokenized_as_read_back_below_branches_gets_the_cut_todo():
    # Bit-numeval/NumEval: the prompt picked in an `if` chain, "query" stored first and then
    # tokenized from the row (the `if` above once stopped the rule with an internal error)
    before = dedent(
        """
        from trl import PPOTrainer
        def tokenize(sample):
            if sample["task"] == "a":
                prompt = A
            else:
                prompt = B
            sample["query"] = prompt.format_map(sample)
            sample["input_ids"] = tokenizer.encode(sample["query"], truncation=True, max_length=64)
            return sample
        ds = ds.map(tokenize)
        t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    out, findings = run(before, select=("TRL105",))
    assert '    sample["prompt"] = prompt.format_map(sample)\n' in out
    todos = [f.message.split(";")[0] for f in findings if f.fix is Fix.MANUAL]
    assert todos == ["`tokenize` cut each prompt to at most 64 tokens"]
    assert run(out, select=("TRL105",))[0] == out


def test_the_finding_points_at_the_assignment_it_rewrote():
    # The function holds calls other passes look at, so its nodes are rebuilt before TRL105
    # sees it; the finding still carries the assignment's line and column.
    before = dedent(
        """
        from trl import PPOTrainer
        def main():
            def tok(sample):
                sample["input_ids"] = tokenizer.encode(sample["review"])[: input_size()]
                sample["query"] = tokenizer.decode(sample["input_ids"])
                return sample
            ds = ds.map(tok)
            t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    _, findings = run(before)
    stored = [f for f in findings if f.code == "TRL105" and "stored as" in f.message]
    assert [(f.line, f.col) for f in stored] == [(5, 9)]


def test_unrecognised_dataset_gets_a_todo_where_it_is_built():
    before = "from trl import PPOTrainer\nds = load_tokenized()\nt = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=r, value_model=v, train_dataset=ds)\n"
    out, findings = run(before, select=("TRL105",))
    assert out.splitlines()[1].startswith(
        '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column'
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=("TRL105",))[0] == out


V2_TLDR = """
from trl import PPOTrainer
def tokenize(element):
    input_ids = tokenizer.apply_chat_template(element["messages"][:1], add_generation_prompt=True)
    return {"input_ids": input_ids, "lengths": len(input_ids)}
ds = ds.map(tokenize, remove_columns=ds.column_names)
ds = ds.filter(lambda x: x["lengths"] <= 512)
t = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=r, value_model=v, train_dataset=ds)
"""


def test_columns_read_elsewhere_stay_and_the_text_is_added_as_prompt():
    # TRL's TL;DR shape: the returned `lengths` feed a length filter, so the tokenization stays
    # and the filter keeps the same prompts; the chat messages become the "prompt" column.
    out, findings = run(dedent(V2_TLDR), select=("TRL105",))
    assert (
        '    return {"prompt": element["messages"][:1], "input_ids": input_ids, '
        '"lengths": len(input_ids)}\n'
    ) in out
    assert "input_ids = tokenizer.apply_chat_template(" in out and "TODO" not in out
    assert [f.fix for f in findings] == [Fix.APPLIED]
    assert run(out, select=("TRL105",))[0] == out


def test_only_input_ids_and_read_nowhere_else_the_tokenization_goes():
    src = (
        dedent(V2_TLDR)
        .replace(', "lengths": len(input_ids)', "")
        .replace('ds = ds.filter(lambda x: x["lengths"] <= 512)\n', "")
    )
    out, _ = run(src, select=("TRL105",))
    assert '    return {"prompt": element["messages"][:1]}\n' in out
    assert "apply_chat_template" not in out


def test_template_variables_of_the_chat_call_are_said_for_chat_template_kwargs():
    """xuwangzi/AIXueRLHF renders Qwen3 prompts with `enable_thinking=False`; RLOO renders the
    "prompt" messages again with its config's `chat_template_kwargs`, empty by default."""
    src = dedent(V2_TLDR).replace(
        "add_generation_prompt=True)", "add_generation_prompt=True, enable_thinking=False)"
    )
    out, findings = run(src, select=("TRL105",))
    said = [f for f in findings if "chat_template_kwargs" in f.message]
    assert [(f.severity, f.line, f.message) for f in said] == [
        (
            Severity.WARNING,
            3,
            "the prompt was rendered with `enable_thinking=False`; RLOOTrainer renders the "
            'conversational "prompt" again with its config\'s `chat_template_kwargs` (none by '
            'default): set `chat_template_kwargs={"enable_thinking": False}` on the config, or '
            "the policy sees another prompt",
        )
    ]
    assert run(out, select=("TRL105",))[0] == out
    # the call's own keywords are no template variables: nothing said
    _, findings = run(dedent(V2_TLDR), select=("TRL105",))
    assert not [f for f in findings if "chat_template_kwargs" in f.message]


# SsmallSong/TRL_FT's v2 script: the text is a local list built before the tokenizer call.
LOCAL_TEXT = '''
from trl import PPOv2Trainer
def tokenize(element):
    """Template, then tokenize."""
    # the chat template
    texts = ["<|user|>\\n" + e for e in element["prompt"]]
    outputs = tokenizer(texts, padding=False)
    return {"input_ids": outputs["input_ids"]}
ds = ds.map(tokenize, remove_columns=ds.column_names, batched=True)
t = PPOv2Trainer(config=c, tokenizer=tok, policy=m, ref_policy=r, reward_model=rm, value_model=v, train_dataset=ds)
'''


def test_statements_the_text_needs_stay_and_only_the_tokenizer_call_goes():
    out, _ = run(LOCAL_TEXT, select=("TRL105",))
    assert out.split("def tokenize(element):\n")[1].split("ds = ")[0] == (
        '    """Template, then tokenize."""\n'
        "    # the chat template\n"
        '    texts = ["<|user|>\\n" + e for e in element["prompt"]]\n'
        '    return {"prompt": texts}\n'
    )
    assert run(out, select=("TRL105",))[0] == out


def test_the_tokenizer_call_stays_when_another_statement_reads_its_result():
    src = LOCAL_TEXT.replace("    return {", '    print(len(outputs["input_ids"]))\n    return {')
    out, _ = run(src, select=("TRL105",))
    assert "    outputs = tokenizer(texts, padding=False)\n" in out
    assert '    print(len(outputs["input_ids"]))\n    return {"prompt": texts}\n' in out


# stack-llama's batched map: a dict of lists filled per example, "query" among them.
BATCHED = """
from trl import PPOTrainer
def build(ds):
    def preprocess(examples):
        new_examples = {"query": [], "input_ids": []}
        for question in examples["question"]:
            query = "Question: " + question
            new_examples["query"].append(query)
            new_examples["input_ids"].append(tokenizer(query)["input_ids"])
        return new_examples
    return ds.map(preprocess, batched=True)
ds = build(raw)
t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""


def test_batched_query_list_becomes_the_prompt_column():
    before = dedent(BATCHED)
    after = before.replace('{"query": [],', '{"prompt": [],').replace(
        'new_examples["query"].append(query)', 'new_examples["prompt"].append(query)'
    )
    out, findings = run(before, select=("TRL105",))
    assert out == after
    assert [f.message for f in findings] == [
        'the text collected as "query" is the "prompt" column now, the one RLOOTrainer reads'
    ]
    assert findings[0].line == 7
    assert run(out, select=("TRL105",))[0] == out


@pytest.mark.parametrize(
    ("tokenized", "cut", "padded"),
    [
        # MedicalGPT: the prompts cut to max_source_length and padded to it
        pytest.param(
            'tokens = tokenizer(query, truncation=True, max_length=args.max_source_length, padding="max_length")',
            "args.max_source_length",
            True,
            id="cut-and-padded",
        ),
        pytest.param("tokens = tokenizer(query, max_length=256)", "256", False, id="cut"),
        pytest.param(
            "tokens = tokenizer(query, max_length=256, truncation=False)", None, False, id="not-cut"
        ),
        pytest.param("tokens = tokenizer(query)", None, False, id="whole"),
        # the ids of another text than the one collected as "query": nothing said of them
        pytest.param("tokens = tokenizer(question, max_length=8)", None, False, id="other-text"),
    ],
)
def test_batched_query_list_whose_tokens_were_cut_gets_the_cut_todo(tokenized, cut, padded):
    before = dedent(BATCHED).replace(
        '            new_examples["input_ids"].append(tokenizer(query)["input_ids"])\n',
        f'            {tokenized}\n            new_examples["input_ids"].append(tokens["input_ids"])\n',
    )
    out, findings = run(before, select=("TRL105",))
    assert 'new_examples["prompt"].append(query)' in out
    todos = [f for f in findings if f.fix is Fix.MANUAL]
    if cut is None:
        assert todos == [] and "TODO" not in out
    else:
        assert [f.message.split(";")[0] for f in todos] == [
            f"`preprocess` cut each prompt to at most {cut} tokens"
        ]
    pads = [f for f in findings if f.message.startswith("the prompt was padded to `max_length`")]
    assert len(pads) == padded
    assert run(out, select=("TRL105",))[0] == out


def test_batched_query_list_read_elsewhere_is_collected_twice():
    before = dedent(BATCHED) + 'print(ds[0]["query"])\n'
    after = before.replace(
        '{"query": [], "input_ids": []}', '{"query": [], "input_ids": [], "prompt": []}'
    ).replace(
        '            new_examples["query"].append(query)\n',
        '            new_examples["query"].append(query)\n            new_examples["prompt"].append(query)\n',
    )
    out, findings = run(before, select=("TRL105",))
    assert out == after
    assert '("query" stays: other code of this file reads it)' in findings[0].message
    assert run(out, select=("TRL105",))[0] == out


@pytest.mark.parametrize(
    "change",
    [
        ('new_examples["input_ids"].append(', 'new_examples["query"].append('),  # two appends
        ('{"query": [], "input_ids": []}', "make_lists()"),  # not a literal
        ('{"query": [], "input_ids": []}', '{"query": [], "prompt": []}'),  # has a prompt
    ],
    ids=["two-appends", "not-a-literal", "prompt-already"],
)
def test_batched_shape_not_recognised_is_left_alone(change):
    out, findings = run(dedent(BATCHED).replace(*change), select=("TRL105",))
    assert '["prompt"].append' not in out
    assert not [f for f in findings if "collected as" in f.message]


V2_CUT = """
from trl import PPOTrainer
def tokenize(element):
    outputs = tokenizer(element["text"], CUT)
    return {"input_ids": IDS}
ds = ds.map(tokenize, remove_columns=ds.column_names)
t = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=r, value_model=v, train_dataset=ds)
"""


@pytest.mark.parametrize(
    ("cut", "ids", "said"),
    [
        pytest.param(
            "truncation=True, max_length=64", 'outputs["input_ids"]', "64", id="truncation"
        ),
        pytest.param(
            "max_length=args.max_prompt_length",
            'outputs["input_ids"]',
            "args.max_prompt_length",
            id="implicit",
        ),
        pytest.param("padding=False", 'outputs["input_ids"][:48]', "48", id="slice"),
        pytest.param(
            "max_length=64",
            'outputs["input_ids"][:48]',
            "64 tokens, then to at most 48",
            id="both",
        ),
        # BaleChen/LaGE: `tokenizer(query, truncation=True, max_length=768)["input_ids"][:-1]`
        pytest.param(
            "max_length=64",
            'outputs["input_ids"][:-1]',
            "64 tokens, then without its last token",
            id="last-dropped",
        ),
    ],
)
def test_prompts_cut_to_a_length_keep_the_rewrite_and_get_a_todo(cut, ids, said):
    src = dedent(V2_CUT).replace("CUT", cut).replace("IDS", ids)
    out, findings = run(src, select=("TRL105",))
    said = said if said.endswith("token") else f"{said} tokens"
    assert out.splitlines()[1] == (
        f"# TODO(trl-migrate TRL105): `tokenize` cut each prompt to at most {said}; "
        'RLOOTrainer tokenizes the whole "prompt" text and TRL 1.13 has no setting that cuts '
        "prompts: shorten the text here (or filter long rows) to train on the same prompts"
    )
    assert '    return {"prompt": element["text"]}\n' in out
    assert sorted(f.fix for f in findings) == sorted([Fix.APPLIED, Fix.MANUAL])
    assert run(out, select=("TRL105",))[0] == out


@pytest.mark.parametrize(
    "cut", ["padding=False", "truncation=False, max_length=64", "max_length=64, truncation=False"]
)
def test_prompts_not_cut_get_no_todo(cut):
    src = dedent(V2_CUT).replace("CUT", cut).replace("IDS", 'outputs["input_ids"]')
    out, _ = run(src, select=("TRL105",))
    assert "TODO" not in out and '    return {"prompt": element["text"]}\n' in out


# deb3011/rlhf_finetuning, HassanJbara/llm-detector-counter: the map stores the token ids and no
# decoded "query"; the text it tokenized goes in as "prompt" beside them.
ASSIGNED = """
from trl import PPOTrainer
def tokenize(sample):
    sample["input_ids"] = TOKENIZE
    return sample
ds = ds.map(tokenize, batched=False)
t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""


def test_token_ids_stored_in_the_row_get_the_text_as_prompt_beside_them():
    before = dedent(ASSIGNED).replace("TOKENIZE", 'tokenizer.encode(sample["query"])')
    after = before.replace(
        "    return sample\n", '    sample["prompt"] = sample["query"]\n    return sample\n'
    )
    findings = assert_fixes(before, after, select=("TRL105",))
    assert [(f.line, f.severity.value, f.message) for f in findings] == [
        (
            2,
            "warning",
            '`tokenize` also stores the text it tokenized as "prompt", the column RLOOTrainer '
            "reads (it tokenizes prompts itself)",
        )
    ]


def test_chat_messages_padded_to_a_length_become_the_prompt_with_a_warning():
    # apply_chat_template pads to max_length but cuts only when told to: no cut, a padding note
    tokenize = (
        'tokenizer.apply_chat_template([{"role": "user", "content": sample["query"]}], '
        'add_generation_prompt=True, padding="max_length", max_length=300)'
    )
    before = dedent(ASSIGNED).replace("TOKENIZE", tokenize)
    after = before.replace(
        "    return sample\n",
        '    sample["prompt"] = [{"role": "user", "content": sample["query"]}]\n    return sample\n',
    )
    findings = assert_fixes(before, after, select=("TRL105",))
    assert "TODO" not in after
    assert [f.message for f in findings if f.severity.value == "warning"][0] == (
        "the prompt was padded to `max_length` with pad tokens, which PPO's `generate` and "
        "`step` read as part of the prompt; RLOOTrainer pads its batches itself and masks the "
        "padding, so the policy now sees the prompt alone"
    )


@pytest.mark.parametrize(
    "tokenize",
    [
        pytest.param(
            'tokenizer.apply_chat_template(sample["messages"])', id="no-generation-prompt"
        ),
        pytest.param('my_encode(sample["query"])', id="not-a-tokenizer"),
    ],
)
def test_token_ids_of_an_unknown_shape_get_the_todo(tokenize):
    out, findings = run(dedent(ASSIGNED).replace("TOKENIZE", tokenize), select=("TRL105",))
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert 'sample["prompt"]' not in out


def test_token_ids_cut_keep_the_rewrite_and_get_the_cut_todo():
    src = dedent(ASSIGNED).replace("TOKENIZE", 'tokenizer.encode(sample["text"])[:64]')
    out, findings = run(src, select=("TRL105",))
    assert '    sample["prompt"] = sample["text"]\n' in out
    assert "# TODO(trl-migrate TRL105): `tokenize` cut each prompt to at most 64 tokens" in out
    assert run(out, select=("TRL105",))[0] == out


# apinball/MyLLM: the map returns the tokenizer's output itself.
RETURNED = """
from trl import PPOTrainer
def tokenize(example):
    return tokenizer(example["question"], truncation=True)
ds = ds.map(tokenize)
t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""


def test_a_map_returning_the_tokenizer_output_returns_the_text_as_prompt():
    before = dedent(RETURNED)
    after = before.replace(
        'return tokenizer(example["question"], truncation=True)',
        'return {"prompt": example["question"]}',
    )
    findings = assert_fixes(before, after, select=("TRL105",))
    assert [f.message for f in findings] == [
        '`tokenize` returns the text it tokenized as "prompt", the column RLOOTrainer reads (it '
        "tokenizes prompts itself)"
    ]


def test_a_returned_encoding_whose_columns_are_read_elsewhere_stays_beside_the_prompt():
    before = dedent(RETURNED).replace(
        "ds = ds.map(tokenize)\n",
        'ds = ds.map(tokenize)\nds = ds.filter(lambda x: len(x["input_ids"]) < 512)\n',
    )
    after = before.replace(
        'return tokenizer(example["question"], truncation=True)',
        'return {"prompt": example["question"], **tokenizer(example["question"], truncation=True)}',
    )
    assert_fixes(before, after, select=("TRL105",))


@pytest.mark.parametrize(
    ("consumer", "named"),
    [
        pytest.param(
            "rm_trainer = Trainer(model=rm, args=targs, train_dataset=ds)\n",
            "Trainer",
            id="trainer",
        ),
        pytest.param(
            'loader = DataLoader(ds["train"], batch_size=8)\n', "DataLoader", id="loader-of-a-split"
        ),
    ],
)
def test_rows_another_trainer_also_takes_keep_their_token_columns(consumer, named):
    # doelleb/guard-fair-rlhf: the tokenized rows train a reward model with transformers'
    # Trainer first; returning only {"prompt": ...} left that Trainer without input_ids
    before = dedent(RETURNED).replace(
        "ds = ds.map(tokenize)\n", "ds = ds.map(tokenize)\n" + consumer
    )
    after = before.replace(
        'return tokenizer(example["question"], truncation=True)',
        'return {"prompt": example["question"], **tokenizer(example["question"], truncation=True)}',
    )
    [f] = assert_fixes(before, after, select=("TRL105",))
    assert f.message == (
        '`tokenize` returns the text it tokenized as "prompt", the column RLOOTrainer reads (it '
        f"tokenizes prompts itself); the token columns stay, since `{named}(...)` of this file "
        "also takes them"
    )


def test_a_returned_dict_of_rows_another_trainer_takes_gains_the_prompt_beside_its_columns():
    before = dedent(
        """
        from trl import PPOTrainer
        def tokenize(example):
            ids = tokenizer.encode(example["question"])
            return {"input_ids": ids}
        ds = ds.map(tokenize)
        sft = SFTTrainer(model=m, train_dataset=ds)
        t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    out, findings = run(before, select=("TRL105",))
    assert 'return {"prompt": example["question"], "input_ids": ids}' in out
    assert any("its other columns stay" in f.message for f in findings)


# Pranavbp525/StoryGen: the encoding bound to the map's own parameter, then returned; the JSON's
# "prompt" column was renamed "query" first, which leaves the dataset without a "prompt".
REBOUND = """
from trl import PPOTrainer
ds = ds.rename_column("prompt", "query")
def tokenize(sample):
    # one encoding per batch
    sample = tokenizer(sample["query"], truncation=True)
    return sample
ds = ds.map(tokenize, batched=True)
t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""


def test_an_encoding_bound_then_returned_returns_the_text_as_prompt():
    before = dedent(REBOUND)
    after = before.replace(
        '    sample = tokenizer(sample["query"], truncation=True)\n    return sample\n',
        '    return {"prompt": sample["query"]}\n',
    )
    assert after != before
    findings = assert_fixes(before, after, select=("TRL105",))
    assert [f.fix for f in findings] == [Fix.APPLIED]


def test_a_column_renamed_away_from_prompt_makes_no_prompt_column():
    # `rename_column("prompt", "query")` once read as the file making a "prompt" column, so
    # TRL105 said nothing about a map it could not rewrite
    src = dedent(REBOUND).replace("    return sample\n", "    return dict(sample)\n")
    out, findings = run(src, select=("TRL105",))
    assert [f.fix for f in findings] == [Fix.MANUAL] and "TODO(trl-migrate TRL105)" in out
    made = src.replace('rename_column("prompt", "query")', 'rename_column("query", "prompt")')
    assert run(made, select=("TRL105",)) == (made, [])


@pytest.mark.parametrize(
    "removed",
    [
        'ds = ds.map(tokenize, remove_columns=["prompt"])\n',
        'ds = ds.map(tokenize, remove_columns="prompt")\n',
        'ds = ds.map(tokenize).remove_columns(["prompt", "x"])\n',
    ],
)
def test_a_prompt_column_made_then_removed_makes_none(removed):
    # AimeeAyat/ATML-PA5: `rename_columns({prompt_col: "prompt"})`, then the tokenizing map drops
    # it with `remove_columns=["prompt"]`: the trainer got input_ids only, with no finding
    made = (
        dedent(REBOUND)
        .replace('rename_column("prompt", "query")', 'rename_column("query", "prompt")')
        .replace("    return sample\n", "    return dict(sample)\n")
    )
    src = made.replace("ds = ds.map(tokenize, batched=True)\n", removed)
    out, findings = run(src, select=("TRL105",))
    assert [f.fix for f in findings] == [Fix.MANUAL] and "TODO(trl-migrate TRL105)" in out
    assert run(out, select=("TRL105",))[0] == out
    assert run(made, select=("TRL105",)) == (made, [])  # kept, it is the trainer's prompt


# singhnikhil01/Outsmart-AI-detection-System: the ids and the text decoded from them.
DECODED = """
from trl import PPOTrainer
def tokenize(sample):
    input_ids = tokenizer.encode(sample["prompt"], truncation=True, max_length=256)
    query = tokenizer.decode(input_ids)
    return {"input_ids": input_ids, "query": query}
ds = ds.map(tokenize, batched=False)
t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""


def test_the_text_decoded_from_cut_ids_is_the_prompt_and_needs_no_todo():
    before = dedent(DECODED)
    after = before.replace('"query": query}', '"prompt": query}')
    findings = assert_fixes(before, after, select=("TRL105",))
    assert [(f.fix, f.message) for f in findings] == [
        (
            Fix.APPLIED,
            '`tokenize` returns the text it decoded as "prompt", the column RLOOTrainer reads '
            '(it was "query")',
        )
    ]


def test_the_decoded_text_read_elsewhere_is_returned_under_both_names():
    before = dedent(DECODED) + 'print(ds[0]["query"])\n'
    after = before.replace('"query": query}', '"query": query, "prompt": query}')
    assert_fixes(before, after, select=("TRL105",))


# tyronen/bb-finetune: the tokenized rows keep only the token columns and the label
KEEP_LIST = """
from trl import PPOTrainer
def preprocess(split):
    def tokenize(sample):
        text = "TL;DR " + sample["prompt"]
        inputs = tokenizer(text)
        return {"input_ids": inputs["input_ids"], "label": sample["label"]}

    split = split.map(tokenize, batched=False)
    split = split.remove_columns(
        [col for col in split.column_names if col not in ("input_ids", "label")]
    )
    return split.select_columns([
        "input_ids",
        "label",
    ])
def other(rows):
    return rows.remove_columns([c for c in rows.column_names if c not in ("input_ids",)])
ds = preprocess(ds)
print(ds[0]["label"], ds[0]["input_ids"])
t = PPOTrainer(config=c, model=m, ref_model=r, tokenizer=tok, dataset=ds)
"""


def test_the_columns_a_tokenizing_function_keeps_keep_its_prompt_too():
    out, findings = run(dedent(KEEP_LIST), select=("TRL105",))
    assert out.split("    split = split.map(")[1].split("def other")[0] == (
        "tokenize, batched=False)\n"
        "    split = split.remove_columns(\n"
        '        [col for col in split.column_names if col not in ("input_ids", "label", '
        '"prompt")]\n'
        "    )\n"
        "    return split.select_columns([\n"
        '        "input_ids",\n'
        '        "label",\n'
        '        "prompt",\n'
        "    ])\n"
    )
    # another function's rows, where nothing was given a "prompt", keep what they kept
    assert 'c not in ("input_ids",)])' in out
    assert [f.message for f in findings if "keeps" in f.message] == [
        '`remove_columns(...)` keeps "prompt" too, the column RLOOTrainer reads, beside the '
        "token columns it kept",
        '`select_columns(...)` keeps "prompt" too, the column RLOOTrainer reads, beside the '
        "token columns it kept",
    ]
    assert run(out, select=("TRL105",))[0] == out


def test_a_keep_list_without_token_columns_or_without_a_prompt_given_is_left():
    src = dedent(KEEP_LIST).replace('("input_ids", "label")', '("label", "text")')
    out, _ = run(src, select=("TRL105",))
    assert 'if col not in ("label", "text")]' in out
    # no function of the file was given a "prompt" (the text is not known): nothing moves
    src = dedent(KEEP_LIST).replace("inputs = tokenizer(text)", "inputs = encode(text)")
    out, _ = run(src, select=("TRL105",))
    assert 'if col not in ("input_ids", "label")]' in out


def test_a_prompt_record_of_an_unrelated_function_does_not_hide_the_dataset_todo():
    # doelleb/guard-fair-rlhf's ppoexperiment.py: prompts tokenized by a lambda map (no
    # "prompt" column), and `result = {"prompt": p, ...}` in a comparison after training, which
    # had been taken for the column: no TODO, and RLOO's KeyError on "prompt"
    before = dedent(
        """
        from trl import PPOTrainer
        def train():
            dataset = Dataset.from_dict({"query": prompts})
            dataset = dataset.map(lambda x: tokenizer(x["query"], truncation=True))
            trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
        def compare(p):
            result = {"prompt": p, "response": generate(p)}
            return result
        """
    )
    out, findings = run(before, select=("TRL105",))
    assert '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column' in out
    assert run(out, select=("TRL105",))[0] == out
    # the same record in the function that builds the dataset still counts as the column
    inside = before.replace(
        "    trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)\n",
        '    rows = [{"prompt": p} for p in prompts]\n'
        "    trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)\n",
    )
    out, _ = run(inside, select=("TRL105",))
    assert "TODO" not in out
    # and so does a row a Dataset class of the file makes (rmorain's ColorDataset)
    rows = before.replace(
        "def compare(p):",
        'class Rows:\n    def __getitem__(self, i):\n        return {"prompt": texts[i]}\ndef compare(p):',
    )
    out, _ = run(rows, select=("TRL105",))
    assert "TODO" not in out
