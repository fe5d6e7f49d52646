//! The slice, one kind of step at a time, on small real Python sources. Every trail is
//! written one step a line (`file:line role: note`); every "made here" step of every
//! trail is also checked against its line's statement (it must compute, not only move).

mod support;

#[path = "../../../tests/origin_support/only_moves.rs"]
mod only_moves;

use assertscope_flow::slice::{self, Chain, Frame, Role, SizeQuery, Trail};
use support::{show, Project};

/// The trail, with every made step checked against the statement of its line.
fn trail(p: &Project, frames: &[(&str, usize)], op: &str, parameter: &str, bad: &[f64]) -> String {
    let t = p.trail(frames, op, parameter, bad);
    check_made(&t);
    show(&t)
}

fn check_made(t: &Trail) {
    for step in
        t.steps.iter().filter(|s| s.role == Role::Made && matches!(s.chain, Chain::Value | Chain::Size))
    {
        let source = std::fs::read_to_string(&step.path).unwrap();
        assert!(!only_moves::only_moves(&source, step.line), "made here on a line that only moves: {step:?}");
    }
}

#[test]
fn assignments_augmented_annotated_and_walrus() {
    let p = Project::new(&[(
        "t.py",
        "import torch.nn.functional as F\n\
         def f(logits, raw):\n\
         \x20   y: int = raw\n\
         \x20   y += 1\n\
         \x20   z = (w := y)\n\
         \x20   return F.cross_entropy(logits, z)\n\
         f(None, 3)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 6), ("t.py", 7)], "cross_entropy", "target", &[4.0]),
        "t.py:4 made: `y += 1` changes every value\n"
    );
}

#[test]
fn unpacking_moves_and_dict_batches() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         def step(model, batch, device):\n\
         \x20   x, y = batch['x'], batch['labels']\n\
         \x20   y = y.to(device).long().view(-1)\n\
         \x20   return torch.nn.functional.cross_entropy(model(x), y.clone().detach())\n\
         step(None, {'x': torch.randn(4, 3), 'labels': torch.tensor([0, 1, 2, 7])}, 'cpu')\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 5), ("t.py", 6)], "cross_entropy", "target", &[7.0]),
        "t.py:4 move: reshaped by `.view(…)`\n\
         t.py:3 unpack: taken from `batch[\"labels\"]`\n\
         t.py:6 made (confirmed): the literal `[0, 1, 2, 7]`\n"
    );
}

#[test]
fn a_parameter_follows_the_call_that_ran_not_another() {
    let source = "import torch\n\
                  def loss(logits, target):\n\
                  \x20   return torch.nn.functional.nll_loss(logits, target)\n\
                  good = torch.tensor([0, 1])\n\
                  bad = torch.tensor([0, 9])\n\
                  loss(torch.randn(2, 3), good)\n\
                  loss(torch.randn(2, 3), bad)\n";
    let p = Project::new(&[("t.py", source)]);
    // From the runtime stack: the call on line 7 ran.
    assert_eq!(
        trail(&p, &[("t.py", 3), ("t.py", 7)], "nll_loss", "target", &[9.0]),
        "t.py:7 move (confirmed): passed as `target` to `loss`\nt.py:5 made: the literal `[0, 9]`\n"
    );
    // Without the stack, the two callers are a fork: only the one that can hold a 9 is kept.
    assert_eq!(
        trail(&p, &[("t.py", 3)], "nll_loss", "target", &[9.0]),
        "t.py:7 move: passed as `target` to `loss`\nt.py:5 made: the literal `[0, 9]`\n"
    );
    // Nothing tells them apart: the trail ends at the parameter, saying why.
    let ends = trail(&p, &[("t.py", 3)], "nll_loss", "target", &[]);
    assert!(
        ends.starts_with("t.py:2 end: `target` may come from the callers of `loss` on several lines (4, 5)"),
        "{ends}"
    );
}

#[test]
fn helpers_of_other_modules_through_relative_imports() {
    let p = Project::new(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/data.py",
            "import torch\n\
             LABELS = ['cat', 'dog']\n\
             def encode(names):\n\
             \x20   ids = [LABELS.index(n) + 1 for n in names]\n\
             \x20   return torch.tensor(ids)\n",
        ),
        (
            "pkg/train.py",
            "import torch\n\
             from .data import encode\n\
             def main():\n\
             \x20   y = encode(['cat', 'dog'])\n\
             \x20   return torch.nn.functional.cross_entropy(torch.randn(2, 2), y)\n",
        ),
    ]);
    assert_eq!(
        trail(&p, &[("pkg/train.py", 5)], "cross_entropy", "target", &[2.0]),
        "data.py:5 move: returned by `encode`\n\
         data.py:4 made: `LABELS.index(n) + 1` shifts every value by +1\n"
    );
}

#[test]
fn loops_over_loaders_enumerate_zip_and_tqdm() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch.utils.data import DataLoader, TensorDataset\n\
         from tqdm import tqdm\n\
         x = torch.randn(10, 3)\n\
         y = torch.randint(0, 3, (10,))\n\
         y[4] = 3\n\
         loader = DataLoader(TensorDataset(x, y), batch_size=5)\n\
         for step, (xb, yb) in enumerate(tqdm(loader)):\n\
         \x20   for a, b in zip(xb, yb):\n\
         \x20       torch.nn.functional.cross_entropy(a[None], b[None])\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 10)], "cross_entropy", "target", &[3.0]),
        "t.py:9 unpack: unpacked from an item of `zip(xb, yb)`\n\
         t.py:8 unpack: unpacked from an item of `enumerate(tqdm(loader))`\n\
         t.py:7 unpack: a row of the TensorDataset's tensor `y`\n\
         t.py:6 made: `y[4] = 3` stores the constant 3\n"
    );
}

const DATASET: &str = "import torch\n\
                       from torch.utils.data import Dataset, DataLoader, Subset, ConcatDataset, random_split\n\
                       NAMES = {'cat': 0, 'dog': 1}\n\
                       class Pets(Dataset):\n\
                       \x20   def __init__(self, rows):\n\
                       \x20       self.x = torch.randn(len(rows), 4)\n\
                       \x20       self.y = [NAMES.get(name, -1) for name in rows]\n\
                       \x20   def __len__(self):\n\
                       \x20       return len(self.y)\n\
                       \x20   def __getitem__(self, i):\n\
                       \x20       return {'pixels': self.x[i], 'label': self.y[i]}\n";

#[test]
fn the_default_collate_a_dict_sample_and_an_attribute_store() {
    let source = format!(
        "{DATASET}loader = DataLoader(Pets(['cat', 'dog', 'eel']), batch_size=2)\n\
         for batch in loader:\n\
         \x20   torch.nn.functional.cross_entropy(torch.randn(2, 2), batch['label'])\n"
    );
    let p = Project::new(&[("t.py", &source)]);
    assert_eq!(
        trail(&p, &[("t.py", 14)], "cross_entropy", "target", &[-1.0]),
        "t.py:13 unpack: an item of `loader`\n\
         t.py:12 move: each batch stacks samples of `Pets(['cat', 'dog', 'eel'])` (the default collate)\n\
         t.py:11 read: read from `self.y`\n\
         t.py:7 made: `NAMES.get(name, -1)` gives -1 for a `name` missing from the map\n"
    );
}

#[test]
fn subset_random_split_and_concat_wrap_the_same_samples() {
    let source = format!(
        "{DATASET}full = Pets(['cat', 'dog', 'eel', 'cat'])\n\
         train, val = random_split(Subset(full, [0, 1, 2]), [2, 1])\n\
         both = ConcatDataset([train, val])\n\
         for batch in DataLoader(both, batch_size=2):\n\
         \x20   torch.nn.functional.cross_entropy(torch.randn(2, 2), batch['label'])\n"
    );
    let p = Project::new(&[("t.py", &source)]);
    let shown = trail(&p, &[("t.py", 16)], "cross_entropy", "target", &[-1.0]);
    assert!(
        shown.ends_with("t.py:7 made: `NAMES.get(name, -1)` gives -1 for a `name` missing from the map\n"),
        "{shown}"
    );
    assert!(shown.contains("t.py:14 move: a sample of one of the concatenated datasets\nt.py:13 unpack: unpacked from `random_split("), "{shown}");
}

#[test]
fn lists_built_by_append_and_by_comprehension() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         def build(lines):\n\
         \x20   labels = []\n\
         \x20   for line in lines:\n\
         \x20       name, stars = line.split(',')\n\
         \x20       labels.append(int(stars))\n\
         \x20   return labels\n\
         def scaled(labels):\n\
         \x20   return [l * 2 for l in labels]\n\
         y = torch.tensor(build(['a,5']))\n\
         torch.nn.functional.cross_entropy(torch.randn(1, 5), y)\n\
         z = torch.tensor(scaled(build(['a,1'])))\n\
         torch.nn.functional.cross_entropy(torch.randn(1, 5), z)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 11)], "cross_entropy", "target", &[5.0]),
        "t.py:10 move: made a tensor by `tensor(…)`\n\
         t.py:7 move: returned by `build`\n\
         t.py:6 made: `int(stars)` parses it from raw text\n"
    );
    assert_eq!(
        trail(&p, &[("t.py", 13)], "cross_entropy", "target", &[]),
        "t.py:12 move: made a tensor by `tensor(…)`\n\
         t.py:9 made: `l * 2` multiplies every value by `2`\n"
    );
}

#[test]
fn constants_lookups_sizes_and_non_finite_values() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         masks = torch.zeros(2, 4, 4, dtype=torch.long)\n\
         masks[..., 0] = 255\n\
         torch.nn.functional.cross_entropy(torch.randn(2, 3, 4, 4), masks)\n\
         LABELS = ['a', 'b', 'c']\n\
         n = len(LABELS)\n\
         torch.nn.functional.one_hot(torch.tensor([n]), 3)\n\
         def sample(logits, temperature):\n\
         \x20   probs = torch.softmax(logits / temperature, dim=-1)\n\
         \x20   return torch.multinomial(probs, 1)\n\
         sample(torch.randn(5), 0.0)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 4)], "cross_entropy", "target", &[255.0]),
        "t.py:3 made: `masks[..., 0] = 255` stores the constant 255\n"
    );
    assert_eq!(
        trail(&p, &[("t.py", 7)], "one_hot", "tensor", &[3.0]),
        "t.py:6 made: `len(LABELS)` computes a size from the data\n"
    );
    let shown = trail(&p, &[("t.py", 10), ("t.py", 11)], "multinomial", "input", &[]);
    assert!(
        shown.starts_with("t.py:9 made: `torch.softmax(logits / temperature, dim=-1)` is NaN"),
        "{shown}"
    );
}

#[test]
fn the_trail_ends_where_the_source_stops_proving() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from transformers import AutoTokenizer\n\
         tok = AutoTokenizer.from_pretrained('x')\n\
         enc = tok(['a b'], return_tensors='pt')\n\
         ids = enc['input_ids']\n\
         torch.nn.functional.embedding(ids, torch.randn(4, 2))\n",
    )]);
    let t = p.trail(&[("t.py", 6)], "embedding", "input", &[9.0]);
    assert!(t.steps.iter().all(|s| s.role != Role::Made), "{}", show(&t));
    let end = t.end.expect("the trail says where it ends");
    // Traced to the tokenizer, a library object: not followed into it.
    assert_eq!(end.line, 3, "{}", show(&p.trail(&[("t.py", 6)], "embedding", "input", &[9.0])));
    assert!(end.note.contains("not followed further"), "{}", end.note);
}

#[test]
fn a_source_that_cannot_hold_the_value_is_not_followed() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         def target_of(i, shift):\n\
         \x20   t = (i * 5) % 6\n\
         \x20   if shift:\n\
         \x20       t = t + 1\n\
         \x20   return t\n\
         y = torch.tensor([target_of(i, True) for i in range(4)])\n\
         torch.nn.functional.cross_entropy(torch.randn(4, 6), y)\n",
    )]);
    // `(i * 5) % 6` is never 6: the value came through the `if`.
    assert_eq!(
        trail(&p, &[("t.py", 8)], "cross_entropy", "target", &[6.0]),
        "t.py:7 move: made a tensor by `tensor(…)`\n\
         t.py:6 move: returned by `target_of`\n\
         t.py:5 made: `t + 1` shifts every value by +1\n"
    );
}

#[test]
fn a_transform_passed_to_the_dataset_is_followed_into_its_lambda() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch.utils.data import Dataset, DataLoader\n\
         class Folder(Dataset):\n\
         \x20   def __init__(self, targets, target_transform=None):\n\
         \x20       self.targets = targets\n\
         \x20       self.target_transform = target_transform\n\
         \x20   def __len__(self):\n\
         \x20       return len(self.targets)\n\
         \x20   def __getitem__(self, i):\n\
         \x20       return torch.zeros(3), self.target_transform(self.targets[i])\n\
         ds = Folder([0, 1, 2], target_transform=lambda t: t + 1)\n\
         for x, y in DataLoader(ds, batch_size=3):\n\
         \x20   torch.nn.functional.cross_entropy(torch.randn(3, 3), y)\n",
    )]);
    let shown = trail(&p, &[("t.py", 13)], "cross_entropy", "target", &[3.0]);
    assert!(shown.ends_with("t.py:11 made: `t + 1` shifts every value by +1\n"), "{shown}");
}

#[test]
fn a_size_trail_from_the_module_to_where_its_size_was_computed() {
    let p = Project::new(&[
        ("labels.py", "LABELS = ['neg', 'pos', 'neutral']\n"),
        (
            "model.py",
            "import torch.nn as nn\n\
             class Head(nn.Module):\n\
             \x20   def __init__(self, n_out):\n\
             \x20       super().__init__()\n\
             \x20       self.fc = nn.Linear(64, n_out)\n",
        ),
        (
            "train.py",
            "from labels import LABELS\n\
             from model import Head\n\
             model = Head(len(LABELS) - 1)\n",
        ),
    ]);
    let sites = vec![
        Frame { file: p.path("model.py"), line: 5, function: None, columns: None },
        Frame { file: p.path("train.py"), line: 3, function: None, columns: None },
    ];
    let query =
        SizeQuery { class: "Linear".into(), sites, size: Some(2), need: Some(3), ..SizeQuery::default() };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "model.py:5 sized (confirmed): `nn.Linear(64, n_out)` built here: out_features = 2, the data needs 3\n\
         train.py:3 made (confirmed): `len(LABELS) - 1` shifts every value by -1\n"
    );
}

#[test]
fn a_file_changed_since_the_process_ran_is_refused_with_a_note() {
    let p = Project::new(&[(
        "t.py",
        "import torch\ny = torch.tensor([5])\ntorch.nn.functional.cross_entropy(torch.randn(1, 5), y)\n",
    )]);
    let mut sources = p.sources();
    sources.stamps.insert(p.path("t.py"), slice::Stamp { size: 3, mtime_ns: 0 });
    let query = p.query(&[("t.py", 3)], "cross_entropy", "target", &[5.0]);
    let (t, notes) = slice::with_project(sources, |project| (slice::trace(project, &query), project.notes()));
    assert_eq!(t, Trail::default());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("changed since the process ran (3 bytes then"), "{notes:?}");
}

#[test]
fn missing_not_python_and_too_large_files_are_refused_with_a_note() {
    let p = Project::new(&[("data.csv", "a,b\n"), ("big.py", &"x = 1\n".repeat(800_000))]);
    for (name, why) in
        [("missing.py", "no such file"), ("data.csv", "not Python source"), ("big.py", "too large")]
    {
        let query = p.query(&[(name, 1)], "cross_entropy", "target", &[]);
        let (t, notes) =
            slice::with_project(p.sources(), |project| (slice::trace(project, &query), project.notes()));
        assert_eq!(t, Trail::default(), "{name}");
        assert!(notes.len() == 1 && notes[0].contains(why), "{name}: {notes:?}");
    }
}

#[test]
fn notebook_cells_are_read_from_their_recorded_text() {
    let p = Project::new(&[]);
    let mut sources = p.sources();
    sources.texts.insert(
        "<ipython-input-3-abc>".into(),
        "import torch\ny = torch.arange(1, 6)\ntorch.nn.functional.cross_entropy(torch.randn(5, 5), y)\n"
            .into(),
    );
    let query = slice::Query {
        frames: vec![Frame { file: "<ipython-input-3-abc>".into(), line: 3, function: None, columns: None }],
        ..p.query(&[], "cross_entropy", "target", &[5.0])
    };
    let t = slice::with_project(sources, |project| slice::trace(project, &query));
    assert_eq!(show(&t), "<ipython-input-3-abc>:2 made: counted by `torch.arange(1, 6)`: it counts from 1\n");
}

#[test]
fn a_layer_kept_in_a_module_dict_is_the_module_its_call_runs() {
    // nanoGPT's and minGPT's pattern: the layers in `nn.ModuleDict(dict(wte=…))` or a dict
    // literal, called as `self.transformer.wte(idx)`; without the process's names (explain),
    // the refused `input` is the call's argument.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         import torch.nn as nn\n\
         class GPT(nn.Module):\n\
         \x20   def __init__(self, vocab):\n\
         \x20       super().__init__()\n\
         \x20       self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, 8), drop=nn.Dropout(0.1)))\n\
         \x20       self.heads = nn.ModuleDict({'pos': nn.Embedding(4, 8)})\n\
         \x20   def forward(self, idx, pos):\n\
         \x20       tok = self.transformer.wte(idx)\n\
         \x20       where = self.heads['pos'](pos)\n\
         \x20       return tok + where\n\
         model = GPT(10)\n\
         ids = torch.tensor([[1, 2]]) + 9\n\
         model(ids, torch.tensor([[0, 4]]))\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 9), ("t.py", 14)], "embedding", "input", &[10.0]),
        "t.py:14 move (confirmed): passed as `idx` to `GPT.forward`\n\
         t.py:13 made: `torch.tensor([[1, 2]]) + 9` shifts every value by +9\n"
    );
    assert_eq!(
        trail(&p, &[("t.py", 10), ("t.py", 14)], "embedding", "input", &[4.0]),
        // (one step a line: the call's line is where the literal was made)
        "t.py:14 made (confirmed): the literal `[[0, 4]]`\n"
    );
}

#[test]
fn a_loss_passed_in_as_a_parameter_is_the_module_every_caller_passes() {
    // pytorch/examples' gcn and gat: `criterion` is a parameter of the training step; every
    // call passes the same `nn.NLLLoss()`, so `criterion(out, target[mask])` runs NLLLoss
    // and its `target` is the second argument.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         import torch.nn as nn\n\
         NAMES = {'a': 0, 'b': 1}\n\
         def step(model, criterion, x, target, mask):\n\
         \x20   return criterion(model(x)[mask], target[mask])\n\
         labels = torch.LongTensor([NAMES.get(n, -1) for n in ['a', 'c']])\n\
         criterion = nn.NLLLoss()\n\
         step(None, criterion, None, labels, [0, 1])\n\
         step(None, criterion, None, labels, [1])\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 5)], "nll_loss", "target", &[-1.0]),
        "t.py:8 move: passed as `target` to `step`\n\
         t.py:6 made: `NAMES.get(n, -1)` gives -1 for a `n` missing from the map\n"
    );
}

#[test]
fn a_helper_that_parses_every_row_it_is_given_makes_the_value() {
    // `int(row["stars"])` in a helper whose every caller passes a csv.DictReader row: the
    // parse made the number; the reader only read text.
    let p = Project::new(&[(
        "t.py",
        "import csv, io\n\
         import torch\n\
         def parse_row(row):\n\
         \x20   stars = int(row['stars'])\n\
         \x20   return stars\n\
         rows = [parse_row(row) for row in csv.DictReader(io.StringIO('stars\\n5\\n'))]\n\
         labels = torch.tensor(rows)\n\
         torch.nn.functional.cross_entropy(torch.zeros(1, 5), labels)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 8)], "cross_entropy", "target", &[5.0]),
        "t.py:7 move: made a tensor by `tensor(…)`\n\
         t.py:5 move: returned by `parse_row`\n\
         t.py:4 made: `int(row['stars'])` parses it from raw text\n"
    );
}

#[test]
fn a_size_from_the_arguments_a_parse_args_helper_returns() {
    // `args = parse_args()`, a helper returning `parser.parse_args()`: the size is the
    // `default=` of its `add_argument`.
    let p = Project::new(&[(
        "t.py",
        "import argparse\n\
         import torch.nn as nn\n\
         def parse_args():\n\
         \x20   parser = argparse.ArgumentParser()\n\
         \x20   parser.add_argument('--num-classes', type=int, default=10)\n\
         \x20   args = parser.parse_args()\n\
         \x20   return args\n\
         args = parse_args()\n\
         head = nn.Linear(32, args.num_classes)\n",
    )]);
    let sites = vec![Frame { file: p.path("t.py"), line: 9, function: None, columns: None }];
    let query =
        SizeQuery { class: "Linear".into(), sites, size: Some(10), need: Some(12), ..SizeQuery::default() };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:9 sized (confirmed): `nn.Linear(32, args.num_classes)` built here: out_features = 10, the data needs 12\n\
         t.py:5 made: the constant 10\n"
    );
}

#[test]
fn a_void_label_names_the_loss_even_where_the_guard_named_the_head() {
    // Under `run` the guard names the modules whose size broke (`modules` false here): a
    // 255 the loss does not ignore still names the loss's construction.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         import torch.nn as nn\n\
         criterion = nn.CrossEntropyLoss()\n\
         mask = torch.zeros(4, dtype=torch.long)\n\
         mask[2] = 255\n\
         criterion(torch.zeros(4, 3), mask)\n",
    )]);
    let query = p.query(&[("t.py", 6)], "cross_entropy", "target", &[255.0]);
    let t = slice::with_project(p.sources(), |project| slice::trace_size_by_flow(project, &query, false));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:3 sized: `nn.CrossEntropyLoss()` built here: it skips targets equal to ignore_index = -100 (the default), not 255\n"
    );
}

#[test]
fn a_recurrent_state_carried_around_the_loop_comes_from_its_first_definition() {
    // The state at the failure is `init_hidden(16)` or, around the loop, the state the GRU
    // returned for the previous batch: that one has the shape of the state passed in, so it
    // is the same value carried, and only the definition before the loop is left.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         import torch.nn as nn\n\
         class Net(nn.Module):\n\
         \x20   def __init__(self):\n\
         \x20       super().__init__()\n\
         \x20       self.gru = nn.GRU(8, 8)\n\
         \x20   def init_hidden(self, batch):\n\
         \x20       return torch.zeros(1, batch, 8)\n\
         \x20   def forward(self, x, h):\n\
         \x20       y, h = self.gru(x, h)\n\
         \x20       return y, h\n\
         model = Net()\n\
         hidden = model.init_hidden(16)\n\
         for x in torch.randn(5, 3, 16, 8).unbind(0):\n\
         \x20   out, hidden = model(x, hidden)\n\
         \x20   hidden = hidden.detach()\n",
    )]);
    // The guard's fact: the state has a batch of 16.
    let mut query = p.query(&[("t.py", 10), ("t.py", 15)], "gru", "hx", &[16.0]);
    query.chain = Some(Chain::Shape);
    query.rows = true;
    let t = slice::with_project(p.sources(), |project| slice::trace(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:15 move (confirmed): passed as `h` to `Net.forward`\n\
         t.py:8 move: returned by `Net.init_hidden`\n\
         t.py:13 made: the constant 16\n"
    );
}

#[test]
fn a_scatter_by_the_permutation_of_a_sort_moves_every_value_back() {
    // Every position of the result is written from `kept` (the index is a full permutation
    // of `probs` along the last dimension), so the zeros it starts from are not a source.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         def top_p(probs, p):\n\
         \x20   kept, order = probs.sort(dim=-1, descending=True)\n\
         \x20   kept[kept.cumsum(dim=-1) > p] = 0.0\n\
         \x20   return torch.zeros_like(probs).scatter(-1, order, kept)\n\
         probs = top_p(torch.softmax(torch.randn(2, 5), dim=-1), 0.0)\n\
         torch.multinomial(probs, 1)\n",
    )]);
    // The guard's fact: the refused row sums to 0 with no negative value, so it is all
    // zeros, which the softmax (rows summing to 1) cannot give; the stored 0.0 can.
    let mut query = p.query(&[("t.py", 7)], "multinomial", "input", &[0.0]);
    query.bad.zero_rows = true;
    let t = slice::with_project(p.sources(), |project| slice::trace(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:5 move: returned by `top_p`\n\
         t.py:4 made: `kept[kept.cumsum(dim=-1) > p] = 0.0` stores the constant 0.0\n"
    );
}

#[test]
fn attributes_stored_together_from_one_call_are_its_elements() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch.utils.data import DataLoader, Dataset\n\
         def load():\n\
         \x20   ids = torch.tensor([3, 1, 4]) + 1\n\
         \x20   return torch.randn(3, 2), ids\n\
         class Rows(Dataset):\n\
         \x20   def __init__(self):\n\
         \x20       self.x, self.y = load()\n\
         \x20   def __len__(self):\n\
         \x20       return 3\n\
         \x20   def __getitem__(self, i):\n\
         \x20       return self.x[i], self.y[i]\n\
         for x, y in DataLoader(Rows(), batch_size=3):\n\
         \x20   torch.nn.functional.cross_entropy(x, y)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 14)], "cross_entropy", "target", &[5.0]),
        "t.py:13 unpack: unpacked from an item of `DataLoader(Rows(), batch_size=3)`\n\
         t.py:12 read: read from `self.y`\n\
         t.py:8 store: stored in `self.y` in `Rows.__init__`\n\
         t.py:5 move: returned by `load`\n\
         t.py:4 made: `torch.tensor([3, 1, 4]) + 1` shifts every value by +1\n"
    );
}

#[test]
fn a_property_read_is_the_value_its_getter_returns() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         class Vocab:\n\
         \x20   def __init__(self, words):\n\
         \x20       self.words = words\n\
         \x20   @property\n\
         \x20   def pad_id(self):\n\
         \x20       return len(self.words)\n\
         vocab = Vocab(['a', 'b'])\n\
         ids = torch.tensor([0, 1, vocab.pad_id])\n\
         torch.nn.functional.embedding(ids, torch.randn(2, 4))\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 10)], "embedding", "input", &[2.0]),
        "t.py:9 move: made a tensor by `tensor(…)`\n\
         t.py:7 made: `len(self.words)` computes a size from the data\n"
    );
}

#[test]
fn an_argument_of_a_call_over_several_lines_is_drawn_on_its_own_line() {
    // The line the user must change is the keyword's, not the call's first line.
    let p = Project::new(&[(
        "t.py",
        "import torch.nn as nn\n\
         class Net(nn.Module):\n\
         \x20   def __init__(self, n_in, n_out):\n\
         \x20       super().__init__()\n\
         \x20       self.head = nn.Linear(n_in, n_out)\n\
         n_src = len(['a', 'b', 'c'])\n\
         n_tgt = len(['x', 'y', 'z', 'w'])\n\
         net = Net(\n\
         \x20   n_in=8,\n\
         \x20   n_out=n_src,\n\
         )\n",
    )]);
    let sites = vec![
        Frame { file: p.path("t.py"), line: 5, function: None, columns: None },
        Frame { file: p.path("t.py"), line: 8, function: None, columns: None },
    ];
    let query =
        SizeQuery { class: "Linear".into(), sites, size: Some(3), need: Some(4), ..SizeQuery::default() };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:5 sized (confirmed): `nn.Linear(n_in, n_out)` built here: out_features = 3, the data needs 4\n\
         t.py:10 move (confirmed): passed as `n_out` to `Net.__init__`\n\
         t.py:6 made: `len(['a', 'b', 'c'])` computes a size from the data\n"
    );
}

#[test]
fn what_accelerate_and_fabric_prepare_is_what_they_were_given() {
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from accelerate import Accelerator\n\
         from torch.utils.data import DataLoader, TensorDataset\n\
         labels = torch.tensor([0, 1, 2]) * 2\n\
         loader = DataLoader(TensorDataset(torch.randn(3, 4), labels), batch_size=3)\n\
         model = torch.nn.Linear(4, 3)\n\
         accelerator = Accelerator()\n\
         model, loader = accelerator.prepare(model, loader)\n\
         for x, y in loader:\n\
         \x20   torch.nn.functional.cross_entropy(model(x), y)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 10)], "cross_entropy", "target", &[4.0]),
        "t.py:9 unpack: unpacked from an item of `loader`\n\
         t.py:8 unpack: unpacked from `accelerator.prepare(model, loader)`\n\
         t.py:5 unpack: a row of the TensorDataset's tensor `labels`\n\
         t.py:4 made: `torch.tensor([0, 1, 2]) * 2` multiplies every value by `2`\n"
    );
}

#[test]
fn an_index_into_the_class_scores_of_a_prepared_model_sizes_its_head() {
    // `logp.gather(1, target)` in a loss written by hand: the index broke the scores' class
    // dimension, made by the model's last layer, through a parameter and Fabric's setup.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch import nn\n\
         from lightning.fabric import Fabric\n\
         BINS = torch.tensor([1.0, 2.0, 3.0])\n\
         N_CLASSES = len(BINS)\n\
         def nll(logits, target):\n\
         \x20   logp = logits.log_softmax(dim=-1)\n\
         \x20   return -logp.gather(1, target.unsqueeze(1)).mean()\n\
         fabric = Fabric()\n\
         model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, N_CLASSES))\n\
         model = fabric.setup(model)\n\
         nll(model(torch.randn(5, 4)), torch.bucketize(torch.rand(5) * 4, BINS))\n",
    )]);
    let mut query = p.query(&[("t.py", 8), ("t.py", 12)], "gather", "index", &[3.0]);
    query.bad.bound = Some(3.0);
    let t = slice::with_project(p.sources(), |project| slice::trace_size_by_flow(project, &query, false));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:10 sized: `nn.Linear(8, N_CLASSES)` built here\n\
         t.py:5 made: `len(BINS)` computes a size from the data\n"
    );
}

#[test]
fn a_collate_lambdas_parameter_is_the_list_of_samples_not_a_name_around_it() {
    // `batch` inside the lambda is its parameter (the samples), not the loop's `batch`.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch.utils.data import DataLoader, Dataset\n\
         class Tags(Dataset):\n\
         \x20   def __init__(self):\n\
         \x20       self.ids = [[i + 1] for i in range(4)]\n\
         \x20   def __len__(self):\n\
         \x20       return 4\n\
         \x20   def __getitem__(self, i):\n\
         \x20       return {'ids': torch.tensor(self.ids[i])}\n\
         def collate(batch, n):\n\
         \x20   out = torch.zeros(len(batch), n)\n\
         \x20   for row, b in enumerate(batch):\n\
         \x20       out[row].scatter_(0, b['ids'], 1.0)\n\
         \x20   return out\n\
         loader = DataLoader(Tags(), batch_size=2, collate_fn=lambda batch: collate(batch, 4))\n\
         for batch in loader:\n\
         \x20   print(batch)\n",
    )]);
    assert_eq!(
        trail(&p, &[("t.py", 13), ("t.py", 15)], "scatter_", "index", &[4.0]),
        "t.py:12 unpack: unpacked from an item of `enumerate(batch)`\n\
         t.py:15 unpack (confirmed): `batch` is a list of samples of `Tags()`, given to the collate function\n\
         t.py:9 read: read from `self.ids`\n\
         t.py:5 made: `i + 1` shifts every value by +1\n"
    );
}

#[test]
fn a_compiled_graphs_operand_name_and_an_imported_table_size_pick_the_table() {
    // A compiled model reports `aten::embedding(weight, indices)`: parameter `indices` at
    // position 1 of another signature. Of the two tables on the line, the one whose size
    // (a constant of the module it is imported from) is the bound the ids broke.
    let p = Project::new(&[
        ("sizes.py", "\"\"\"Sizes.\"\"\"\nfrom datetime import datetime\nSLOTS = 7 * 24\ndef slot(t):\n    return datetime.fromisoformat(t).hour\n"),
        (
            "t.py",
            "import torch\n\
             from torch import nn\n\
             from sizes import SLOTS, slot\n\
             class Clicks(nn.Module):\n\
             \x20   def __init__(self):\n\
             \x20       super().__init__()\n\
             \x20       self.slot = nn.Embedding(SLOTS, 4)\n\
             \x20       self.page = nn.Embedding(len(PAGES), 4)\n\
             \x20   def forward(self, slots, pages):\n\
             \x20       return self.slot(slots) + self.page(pages)\n\
             PAGES = ['a', 'b']\n\
             model = Clicks()\n\
             pages = torch.arange(200) * 1\n\
             model(torch.arange(170) + 24, pages)\n",
        ),
    ]);
    let mut query = p.query(&[("t.py", 10), ("t.py", 14)], "embedding", "indices", &[190.0]);
    query.operand.position = Some(1);
    query.bad.bound = Some(168.0);
    let t = slice::with_project(p.sources(), |project| slice::trace(project, &query));
    check_made(&t);
    assert_eq!(show(&t), "t.py:14 made (confirmed): `torch.arange(170) + 24` shifts every value by +24\n");
}

#[test]
fn a_collate_that_appends_under_keys_and_converts_by_a_dict_comprehension() {
    // The key is kept through `{k: torch.tensor(v) for k, v in batch.items()}` and through
    // `batch["types"].append(…)`; the collate's samples are elements of a plain list.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch.utils.data import DataLoader\n\
         def encode(parts):\n\
         \x20   ids, types = [101], [0]\n\
         \x20   for segment, text in enumerate(parts):\n\
         \x20       ids += [len(text)]\n\
         \x20       types += [segment]\n\
         \x20   return {'ids': ids, 'types': types}\n\
         def collate(examples):\n\
         \x20   batch = {'ids': [], 'types': []}\n\
         \x20   for e in examples:\n\
         \x20       batch['ids'].append(e['ids'])\n\
         \x20       batch['types'].append(e['types'])\n\
         \x20   batch = {k: torch.tensor(v) for k, v in batch.items()}\n\
         \x20   return batch\n\
         examples = [encode(p) for p in [['a', 'b', 'c']]]\n\
         for batch in DataLoader(examples, batch_size=1, collate_fn=collate):\n\
         \x20   torch.nn.Embedding(2, 4)(batch['types'])\n",
    )]);
    let mut query = p.query(&[("t.py", 18)], "embedding", "input", &[2.0]);
    query.operand.holders = vec!["batch['types']".into()];
    let t = slice::with_project(p.sources(), |project| slice::trace(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:17 unpack: an item of `DataLoader(examples, batch_size=1, collate_fn=collate)`\n\
         t.py:15 move: returned by `collate`\n\
         t.py:14 move: made a tensor by `tensor(…)`\n\
         t.py:13 store: `batch['types'].append(e['types'])` adds to it\n\
         t.py:11 unpack: an item of `examples`\n\
         t.py:8 move: returned by `encode`\n\
         t.py:7 made: `types += [segment]` changes every value\n"
    );
}

#[test]
fn a_module_built_inside_a_library_call_is_drawn_at_that_call() {
    // The runtime saw the head built while `from_pretrained(…)` ran on the user's line: the
    // step is that call, and the trail ends inside the library.
    let p = Project::new(&[(
        "t.py",
        "from transformers import AutoModelForSequenceClassification\n\
         model = AutoModelForSequenceClassification.from_pretrained(\n\
         \x20   \"bert-base-cased\", return_dict=True\n\
         )\n",
    )]);
    let sites = vec![Frame { file: p.path("t.py"), line: 2, function: None, columns: None }];
    let query = SizeQuery {
        class: "Linear".into(),
        argument: Some("out_features".into()),
        sites,
        size: Some(2),
        need: Some(3),
        ..SizeQuery::default()
    };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    assert_eq!(
        show(&t),
        "t.py:2 sized (confirmed): `AutoModelForSequenceClassification.from_pretrained( \"bert…` built the `Linear` inside the library: out_features = 2, the data needs 3\n\
         t.py:2 end: its out_features is set inside the library (a default, or a configuration it read); not followed further\n"
    );
    // Two calls on the line: the stack does not say which built it, so neither is drawn.
    let p = Project::new(&[(
        "t.py",
        "from transformers import Trainer
         Trainer(model=None).train()
",
    )]);
    let sites = vec![Frame { file: p.path("t.py"), line: 2, function: None, columns: None }];
    let query = SizeQuery { class: "CrossEntropyLoss".into(), sites, ..SizeQuery::default() };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    assert_eq!(show(&t), "t.py:2 end: no `CrossEntropyLoss(…)` call on this line; not followed further\n");
}

#[test]
fn a_head_built_by_hand_from_a_parameter_is_found_through_local_layers() {
    // No torch layer makes the scores: `x @ self.weight` of a layer built from
    // `nn.Parameter(torch.empty(n_in, n_out))`, reached through the loss and model passed
    // as parameters, a row selection and the second of two instances of the layer.
    let p = Project::new(&[(
        "t.py",
        "import torch\n\
         from torch import nn\n\
         import torch.nn.functional as F\n\
         class Dense(nn.Module):\n\
         \x20   def __init__(self, n_in, n_out):\n\
         \x20       super().__init__()\n\
         \x20       self.weight = nn.Parameter(torch.empty(n_in, n_out))\n\
         \x20   def forward(self, x):\n\
         \x20       return x @ self.weight\n\
         class Net(nn.Module):\n\
         \x20   def __init__(self, n_in, n_hidden, n_classes):\n\
         \x20       super().__init__()\n\
         \x20       self.one = Dense(n_in, n_hidden)\n\
         \x20       self.two = Dense(n_hidden, n_classes)\n\
         \x20   def forward(self, x):\n\
         \x20       return F.log_softmax(self.two(F.relu(self.one(x))), dim=1)\n\
         def evaluate(model, criterion, x, y, mask):\n\
         \x20   out, y = model(x)[mask], y[mask]\n\
         \x20   return criterion(out, y)\n\
         labels = torch.tensor([0, 1, 2, 3])\n\
         model = Net(4, 8, labels[:2].max().item() + 1)\n\
         evaluate(model, nn.NLLLoss(), torch.randn(4, 4), labels, labels >= 0)\n",
    )]);
    let mut query = p.query(&[("t.py", 19), ("t.py", 22)], "nll_loss", "target", &[3.0]);
    query.bad.bound = Some(2.0);
    let t = slice::with_project(p.sources(), |project| slice::trace_size_by_flow(project, &query, true));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:7 sized: `torch.empty(n_in, n_out)` makes the weight whose last dimension, `n_out`, is the number of scores\n\
         t.py:21 made: `labels[:2].max().item() + 1` shifts every value by +1\n"
    );
}

#[test]
fn the_configuration_field_that_sized_a_table_the_library_built() {
    // The runtime saw a 48-row table built inside `Model(config)`: of the config's fields
    // that size embeddings, the one set to 48 is the step; its value is followed on.
    let p = Project::new(&[(
        "t.py",
        "from transformers import RobertaConfig, RobertaForSequenceClassification\n\
         LONGEST = 40 + 8\n\
         config = RobertaConfig(\n\
         \x20   vocab_size=1000,\n\
         \x20   hidden_size=48,\n\
         \x20   max_position_embeddings=LONGEST,\n\
         )\n\
         model = RobertaForSequenceClassification(config)\n",
    )]);
    let sites = vec![Frame { file: p.path("t.py"), line: 8, function: None, columns: None }];
    let query = SizeQuery {
        class: "Embedding".into(),
        argument: Some("num_embeddings".into()),
        sites,
        size: Some(48),
        need: Some(60),
        ..SizeQuery::default()
    };
    let t = slice::with_project(p.sources(), |project| slice::trace_size(project, &query));
    check_made(&t);
    assert_eq!(
        show(&t),
        "t.py:8 sized (confirmed): `RobertaForSequenceClassification(config)` built the `Embedding` inside the library: num_embeddings = 48, the data needs 60\n\
         t.py:6 read: `max_position_embeddings=LONGEST` in the configuration sets it (48)\n\
         t.py:2 made: `40 + 8` shifts every value by +8\n"
    );
}
