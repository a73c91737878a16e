#!/usr/bin/env python3
"""Writes tests/data/broken/config/: config.json files of Hugging Face model
folders that the library must refuse (or, for the OK cases, accept), each
derived from tests/data/hf/gmlp_wide/config.json (a gMLP with 3 input
channels, 24x40 images, 3x5 tokens, 4 classes) with one defect.  test_hf
puts each beside gmlp_wide's model.safetensors in a folder of its own.
manifest.txt lists one case per line:

    FILE <TAB> STATUS <TAB> SUBSTRING

STATUS is OK, FORMAT or UNSUPPORTED and SUBSTRING a fragment of the library's message
(compare case-insensitively); for the refusals it names the key.  The size
cap (16 MiB) is tested by test_hf with a file it makes, not stored here.
Deterministic; standard library only:

    python3 tools/make_broken_configs.py
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "tests", "data", "hf", "gmlp_wide", "config.json")
OUT = os.path.join(HERE, "..", "tests", "data", "broken", "config")


def edited(base, *edits):
    """base with (keys, value) edits; value None deletes the key."""
    cfg = copy.deepcopy(base)
    for keys, value in edits:
        d = cfg
        for k in keys[:-1]:
            d = d[k]
        if value is None:
            del d[keys[-1]]
        else:
            d[keys[-1]] = value
    return json.dumps(cfg, indent=2).encode()


def cases(base):
    P = "pretrained_cfg"
    text = json.dumps(base, indent=2).encode()
    old = {k: v for k, v in base[P].items()}  # the earliest layout: one object, no pretrained_cfg
    old["architecture"] = base["architecture"]
    return [
        # accepted
        ("valid.json", "OK", "", text),
        ("old_layout.json", "OK", "", json.dumps(old, indent=2).encode()),
        ("crop_pct_null.json", "OK", "", edited(base, ((P, "crop_pct"), None))),
        ("labels_deprecated_name.json", "OK", "", edited(base, ((P, "labels"), ["a", "b", "c", "d"]))),
        # timm's resolve_input_data_config: one value per channel repeated, another count averaged
        ("mean_one.json", "OK", "", edited(base, ((P, "mean"), [0.3]), ((P, "std"), [0.2]))),
        ("mean_two.json", "OK", "", edited(base, ((P, "mean"), [0.5, 0.4]))),
        ("mean_four.json", "OK", "", edited(base, ((P, "mean"), [0.5, 0.5, 0.5, 0.5]))),
        # save_for_hf's dict form {id: name}, in any order; empty names, as timm keeps them
        ("label_names_object.json", "OK", "", edited(base, (("label_names",), {"3": "d", "0": "a", "2": "c", "1": "b"}))),
        ("label_names_empty.json", "OK", "", edited(base, (("label_names",), ["a", "", "c", ""]))),
        ("model_args_same.json", "OK", "", edited(base, (("model_args", "patch_size"), 8), (("model_args", "embed_dim"), 16),
                                                  (("model_args", "num_blocks"), 2), (("model_args", "stem_norm"), False),
                                                  (("model_args", "mlp_ratio"), 4))),
        ("model_args_img_size_only.json", "OK", "", edited(base, ((P, "input_size"), None))),
        # JSON that does not parse, or is not what a config is
        ("empty.json", "FORMAT", "not valid json", b""),
        ("truncated.json", "FORMAT", "line", text[: len(text) // 2]),
        ("trailing_comma.json", "FORMAT", "not valid json", b'{"num_classes": 4,}'),
        ("duplicate_key.json", "FORMAT", "duplicate", b'{"num_classes": 4, "num_classes": 4}'),
        ("bad_utf8.json", "FORMAT", "not valid json", b'{"architecture": "gmlp\xff"}'),
        ("deep_nesting.json", "FORMAT", "nests deeper", b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}"),
        ("top_array.json", "FORMAT", "must be an object", b"[1, 2]"),
        # wrong types
        ("pretrained_cfg_string.json", "FORMAT", "pretrained_cfg must be an object",
         edited(base, ((P,), "imagenet"))),
        ("mean_string.json", "FORMAT", "pretrained_cfg.mean must be an array",
         edited(base, ((P, "mean"), "0.5,0.5,0.5"))),
        ("mean_element_string.json", "FORMAT", "pretrained_cfg.mean[1]", edited(base, ((P, "mean"), [0.5, "x", 0.5]))),
        ("mean_many.json", "FORMAT", "pretrained_cfg.mean has 65 entries", edited(base, ((P, "mean"), [0.5] * 65))),
        ("std_zero.json", "FORMAT", "pretrained_cfg.std", edited(base, ((P, "std"), [0.2, 0.0, 0.2]))),
        ("interpolation_number.json", "FORMAT", "pretrained_cfg.interpolation must be a string",
         edited(base, ((P, "interpolation"), 3))),
        ("interpolation_unknown.json", "FORMAT", "pretrained_cfg.interpolation",
         edited(base, ((P, "interpolation"), "random"))),  # training only: timm's eval refuses it
        ("crop_mode_unknown.json", "FORMAT", "pretrained_cfg.crop_mode", edited(base, ((P, "crop_mode"), "random"))),
        ("crop_pct_string.json", "FORMAT", "pretrained_cfg.crop_pct must be a number",
         edited(base, ((P, "crop_pct"), "0.9"))),
        ("crop_pct_zero.json", "FORMAT", "pretrained_cfg.crop_pct", edited(base, ((P, "crop_pct"), 0))),
        ("num_classes_string.json", "FORMAT", "num_classes must be an integer", edited(base, (("num_classes",), "4"))),
        ("architecture_number.json", "FORMAT", "architecture must be a string", edited(base, (("architecture",), 5))),
        ("label_names_object_gap.json", "FORMAT", 'label_names has 4 entries but no key "2"',
         edited(base, (("label_names",), {"0": "a", "1": "b", "x": "c", "3": "d"}))),
        ("label_names_string.json", "FORMAT", "label_names must be an array of strings or an object",
         edited(base, (("label_names",), "a"))),
        ("label_names_number.json", "FORMAT", "label_names[2]", edited(base, (("label_names",), ["a", "b", 3, "d"]))),
        ("label_names_newline.json", "FORMAT", "label_names[1]",
         edited(base, (("label_names",), ["a", "b\nc", "d", "e"]))),
        ("input_size_two.json", "FORMAT", "pretrained_cfg.input_size", edited(base, ((P, "input_size"), [24, 40]))),
        ("model_args_list.json", "FORMAT", "model_args must be an object", edited(base, (("model_args",), [3]))),
        # contradicting the weights
        ("num_classes_1000.json", "FORMAT", "num_classes says 1000 classes", edited(base, (("num_classes",), 1000))),
        ("pcfg_num_classes.json", "FORMAT", "pretrained_cfg.num_classes", edited(base, ((P, "num_classes"), 10))),
        ("model_args_num_classes.json", "FORMAT", "model_args.num_classes",
         edited(base, (("model_args", "num_classes"), 0))),
        ("label_count.json", "FORMAT", "label_names has 3 names", edited(base, (("label_names",), ["a", "b", "c"]))),
        ("input_size_tokens.json", "FORMAT", "pretrained_cfg.input_size",
         edited(base, ((P, "input_size"), [3, 32, 32]))),
        ("input_size_patch.json", "FORMAT", "pretrained_cfg.input_size",
         edited(base, ((P, "input_size"), [3, 25, 40]))),
        ("input_size_channels.json", "FORMAT", "pretrained_cfg.input_size says 1 input channels",
         edited(base, ((P, "input_size"), [1, 24, 40]), ((P, "mean"), [0.5]), ((P, "std"), [0.5]))),
        ("model_args_in_chans.json", "FORMAT", "model_args.in_chans", edited(base, (("model_args", "in_chans"), 1))),
        ("model_args_img_size.json", "FORMAT", "model_args.img_size 64x64 contradicts pretrained_cfg.input_size",
         edited(base, (("model_args", "img_size"), [64, 64]))),
        ("model_args_img_size_tokens.json", "FORMAT", "model_args.img_size: image 32x32",
         edited(base, ((P, "input_size"), None), (("model_args", "img_size"), 32))),
        ("model_args_embed_dim.json", "FORMAT", "model_args.embed_dim says 64, but the weights have 16",
         edited(base, (("model_args", "embed_dim"), 64))),
        ("num_features.json", "FORMAT", "num_features says 32", edited(base, (("num_features",), 32))),
        ("model_args_patch_size.json", "FORMAT", "model_args.patch_size says 16x16, but the weights have 8x8",
         edited(base, (("model_args", "patch_size"), 16))),
        ("model_args_num_blocks.json", "FORMAT", "model_args.num_blocks says 12", edited(base, (("model_args", "num_blocks"), 12))),
        ("model_args_stem_norm.json", "FORMAT", "model_args.stem_norm says true", edited(base, (("model_args", "stem_norm"), True))),
        ("model_args_mlp_ratio.json", "FORMAT", "model_args.mlp_ratio says 6 (hidden width 96)",
         edited(base, (("model_args", "mlp_ratio"), 6))),
        # gmlp-cl pools as timm's 'avg'; '' would give per-token outputs
        ("global_pool_tokens.json", "UNSUPPORTED", "model_args.global_pool '' is not supported",
         edited(base, (("model_args", "global_pool"), ""))),
        ("global_pool_max.json", "UNSUPPORTED", "global_pool 'max' is not supported", edited(base, (("global_pool",), "max"))),
        ("architecture_mixer.json", "FORMAT", "architecture 'mixer_b16_224'",
         edited(base, (("architecture",), "mixer_b16_224"))),
    ]


def main():
    with open(BASE) as f:
        base = json.load(f)
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for name, status, sub, blob in cases(base):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)
        lines.append(f"{name}\t{status}\t{sub}\n")
    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.writelines(lines)
    print(f"{len(lines)} cases in {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
