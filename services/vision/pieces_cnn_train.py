"""Train the piece-type CNN (`python -m xqarb.vision.pieces_cnn_train`): writes `xqarb/data/vision/pieces_types.onnx`.

A small 2-D convolutional network on the crop's darkness image (`pieces.cnn_input`: the smallest channel, 32 x 32,
standardised), trained here with PyTorch and exported to ONNX; at run time OpenCV's DNN module runs it
(`pieces.TypeNet`), so the product needs no deep-learning framework. Training needs the optional extra `train`
(`pip install -e '.[train]'`: torch and onnx).

Data (see `pieces_train.py`, whose loaders and renderers this reuses):
- the real crops of `../shared/data/piece_crops/train` (Roboflow Universe "Chinese-chess-detect-for-yolo v8",
  CC BY 4.0), less a held-out seventh of its photos (files sharing the prefix before `_jpg.rf.` are one photo: all
  of a photo's crops on one side) that chooses the epoch kept; the `valid` split is not looked at here;
- sprites of every installed CJK font and glyph variant through a random camera (`pieces_train.synth_samples`);
- pieces of whole rendered boards, rectified as the detector sees them (`pieces_train.rendered_board_samples`).
Every crop is kept as its darkness about the disc found in it (`pieces.disc_view`, 48 x 48, as at run time);
each epoch sees it anew through a random camera: any rotation
(a piece faces any side), scale, tilt, a little off-centre, blur, contrast, noise, and the ink's polarity flipped
(light characters on dark discs).

Deterministic for its arguments (seeded numpy and torch generators, one thread). Measure the result with
`python -m xqarb.vision.pieces_train --report` (bench/RESULTS.md "## pieces").
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xqarb.vision import pieces as P
from xqarb.vision import pieces_train as T

HOLDOUT_SHARE = 7  # one photo in this many of `train` is held out to choose the epoch (by a hash of its name)
TILT_MAX = 35.0  # degrees from straight above: the camera angles the crops are rectified from
SCALE_RANGE = (0.8, 1.2)  # the disc's size in its view: the disc finder's radius is off by up to about a tenth,
# more where it misses the disc (the default disc: the crop's own margin)
MISSED_SHARE = 0.2  # share of crops shown smaller, as where the disc finder missed the disc (a pale table, glare)
MISSED_SCALE = (0.45, 0.8)  # ... and the crop's own margin stays: the disc 0.5-1.0 of the crop's side
SHIFT_MAX = 0.05  # of the view's side: the disc finder's centre is off by a pixel or two
POLARITY_FLIP = 0.25  # share of crops shown with the ink's polarity flipped (light characters on dark discs)
BLUR_SHARE = 0.35  # share of crops shrunk and enlarged again: small, blurred pieces far from the camera
BLUR_SIDE = (12, 26)  # the side (pixels) such a crop is shrunk to
PART_WEIGHT = (1.0, 0.5, 1.0)  # real, sprites, rendered boards: the loss's weight of each part (class-balanced within)


def held_out(photo: str) -> bool:
    """Whether a real photo is in the model-selection part of `train` (stable: a hash of its name)."""
    return zlib.crc32(photo.encode()) % HOLDOUT_SHARE == 0


def split_train(samples: Sequence[T.Sample]) -> tuple[list[T.Sample], list[T.Sample]]:
    """(to fit, held out) by photo: a photo's copies all on one side."""
    return [s for s in samples if not held_out(s.photo)], [s for s in samples if held_out(s.photo)]


def crops48(samples: Sequence[T.Sample]) -> np.ndarray:
    """(N, 48, 48, 3) uint8: each crop at the classifier's working size (what the features start from)."""
    return np.stack([P.normalise_crop(s.image) for s in samples])


def disc_views(imgs: np.ndarray) -> np.ndarray:
    """(N, 48, 48) uint8: each crop's darkness about its found disc (`pieces.disc_view`), before the camera's
    augmentation."""
    return np.stack([P.disc_view(im) for im in imgs])


def net_inputs(imgs: np.ndarray) -> np.ndarray:
    """(N, 32, 32) float32: exactly what the classifier feeds the network at run time."""
    return np.stack([P.cnn_input(im) for im in imgs])


def build_model(widths: Sequence[int]):
    """conv-BN-ReLU blocks, 2x2 max-pooling after each but the last, global average pooling, a linear head."""
    import torch.nn as nn

    layers: list[nn.Module] = []
    c = 1
    for i, w in enumerate(widths):
        layers += [nn.Conv2d(c, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
        if i < len(widths) - 1:
            layers.append(nn.MaxPool2d(2))
        c = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(c, len(P.TYPES))]
    return nn.Sequential(*layers)


def augment(x48, gen):
    """A batch (B, 1, 48, 48) of darkness images (0..1) seen through a random camera -> (B, 1, 32, 32) inputs."""
    import torch
    import torch.nn.functional as F

    b = x48.shape[0]
    u = lambda lo, hi: lo + (hi - lo) * torch.rand(b, generator=gen)  # noqa: E731
    ang = u(0, 2 * np.pi)
    scale = torch.where(torch.rand(b, generator=gen) < MISSED_SHARE, u(*MISSED_SCALE), u(*SCALE_RANGE))
    tilt = torch.cos(torch.deg2rad(u(0, TILT_MAX)))
    phi = u(0, np.pi)

    def rot(a):
        c, s = torch.cos(a), torch.sin(a)
        return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)

    squash = torch.diag_embed(torch.stack([torch.ones(b), tilt], -1))
    # output coordinates -> input coordinates: the inverse of (rotate, tilt, scale)
    a = rot(ang) @ rot(phi) @ torch.linalg.inv(squash) @ rot(-phi) / scale[:, None, None]
    shift = (torch.rand(b, 2, generator=gen) * 2 - 1) * 2 * SHIFT_MAX
    theta = torch.cat([a, shift[:, :, None]], 2)
    grid = F.affine_grid(theta, [b, 1, P.SIZE, P.SIZE], align_corners=False)
    x = F.grid_sample(x48, grid, mode="bilinear", padding_mode="border", align_corners=False)
    x = F.adaptive_avg_pool2d(x, P.CNN_SIZE)  # as cv2.INTER_AREA at run time
    blur = torch.rand(b, generator=gen) < BLUR_SHARE
    if blur.any():
        side = int(torch.randint(BLUR_SIDE[0], BLUR_SIDE[1] + 1, (1,), generator=gen))
        small = F.interpolate(x[blur], size=side, mode="area")
        x[blur] = F.interpolate(small, size=P.CNN_SIZE, mode="bilinear", align_corners=False)
    x = x.clamp(0, 1) ** torch.exp(u(-0.5, 0.5))[:, None, None, None]  # the light's contrast curve
    x = x + torch.randn(x.shape, generator=gen) * u(0, 0.03)[:, None, None, None]
    x = x * 255.0
    mean = x.mean((1, 2, 3), keepdim=True)
    std = x.std((1, 2, 3), unbiased=False, keepdim=True).clamp(min=P.CNN_STD_FLOOR)
    x = (x - mean) / std
    flip = (torch.rand(b, generator=gen) < POLARITY_FLIP).float()[:, None, None, None]
    return x * (1 - 2 * flip)


def class_weights(y: np.ndarray, part: np.ndarray) -> np.ndarray:
    """Every type weighs the same within each part; the parts weigh PART_WEIGHT."""
    w = np.ones(len(y), np.float32)
    for k, pw in enumerate(PART_WEIGHT):
        sel = part == k
        counts = np.bincount(y[sel], minlength=len(P.TYPES)).astype(np.float32)
        w[sel] = pw * (counts.sum() / (len(P.TYPES) * np.maximum(counts, 1)))[y[sel]]
    return w / w.mean()


def accuracy(model, x: np.ndarray, y: np.ndarray) -> float:
    import torch

    model.eval()
    with torch.no_grad():
        z = torch.cat([model(torch.from_numpy(x[i:i + 512, None])) for i in range(0, len(x), 512)])
    model.train()
    return float((z.argmax(1).numpy() == y).mean())


def export_onnx(model, path: Path) -> None:
    import torch

    model.eval()
    buf = io.BytesIO()
    torch.onnx.export(model, torch.zeros(1, 1, P.CNN_SIZE, P.CNN_SIZE), buf, input_names=["crop"],
                      output_names=["logits"], dynamic_axes={"crop": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13, dynamo=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def load_data(args: argparse.Namespace, data: Path, log) -> dict[str, np.ndarray]:
    """The training crops as darkness images, labels and parts, and the held-out photos' run-time inputs."""
    if args.cache and args.cache.is_file():
        log(f"crops from {args.cache}")
        return dict(np.load(args.cache))
    train = T.load_real(data / "train")
    fit, hold = split_train(train)
    log(f"real train: {len(fit)} crops of {len({s.photo for s in fit})} photos; held out {len(hold)} crops of "
        f"{len({s.photo for s in hold})} photos; drawing {args.synthetic} sprites ...")
    sprites = T.synth_samples(args.synthetic, args.seed + 1)
    log(f"rendering {args.boards} boards ...")
    boards = T.rendered_board_samples(args.boards, args.seed + 3)
    hold_boards = T.rendered_board_samples(args.hold_boards, args.seed + 5)
    samples = fit + sprites + boards
    out = {"img": crops48(samples), "y": np.array([s.type_index for s in samples]),
           "part": np.repeat([0, 1, 2], [len(fit), len(sprites), len(boards)]),
           "himg": crops48(hold), "hy": np.array([s.type_index for s in hold]),
           "bimg": crops48(hold_boards), "by": np.array([s.type_index for s in hold_boards])}
    if args.cache:
        np.savez(args.cache, **out)
    return out


def model_inputs(d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The crops as the network is trained on them (disc views) and as it is run (held-out inputs)."""
    return dict(d, x=disc_views(d["img"]), hx=net_inputs(d["himg"]), bx=net_inputs(d["bimg"]))


def train(args: argparse.Namespace, d: dict[str, np.ndarray], log):
    """The model of the best epoch on the held-out real photos (ties: the held-out rendered boards)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = build_model([int(v) for v in args.widths.split(",")])
    log(f"model: {sum(p.numel() for p in model.parameters())} parameters")
    x = torch.from_numpy(d["x"]).float()[:, None] / 255.0
    y = torch.from_numpy(d["y"]).long()
    w = torch.from_numpy(class_weights(d["y"], d["part"]))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    steps = args.epochs * ((len(x) + args.batch - 1) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.15)
    best, best_state = (-1.0, -1.0), None
    for ep in range(args.epochs):
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for i in range(0, len(x), args.batch):
            b = order[i:i + args.batch]
            loss = (F.cross_entropy(model(augment(x[b], gen)), y[b], reduction="none", label_smoothing=0.05)
                    * w[b]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(b)
        score = (accuracy(model, d["hx"], d["hy"]), accuracy(model, d["bx"], d["by"]))
        log(f"epoch {ep + 1}/{args.epochs}: loss {total / len(x):.4f}, held-out real photos {score[0]:.4f}, "
            f"held-out rendered boards {score[1]:.4f}")
        if score >= best:
            best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    log(f"kept: held-out real {best[0]:.4f}, boards {best[1]:.4f}")
    return model


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="piece_crops directory (train/)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "xqarb" / "data" / "vision"
                    / P.TYPE_NET_FILE)
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--synthetic", type=int, default=6000, help="rendered training sprites")
    ap.add_argument("--boards", type=int, default=120, help="rendered boards (40 pieces each) to crop pieces from")
    ap.add_argument("--hold-boards", type=int, default=5, help="rendered boards held out to choose the epoch")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--widths", default="16,24,48,96")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument("--wd", type=float, default=5e-4)
    ap.add_argument("--cache", type=Path, default=None, help="crops cache (.npz) to reuse between runs")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    data = args.data or T._default_data()
    t0 = time.time()
    log = lambda *a: print(f"[{time.time() - t0:6.0f}s]", *a, flush=True)  # noqa: E731
    d = model_inputs(load_data(args, data, log))
    log(f"{len(d['x'])} training crops (real, sprites, boards: {np.bincount(d['part']).tolist()})")
    model = train(args, d, log)
    export_onnx(model, args.out)
    net = P.TypeNet(args.out.read_bytes())  # what the product runs: OpenCV's DNN module
    model.eval()
    with torch.no_grad():
        ref = model(torch.from_numpy(d["hx"][:64, None])).numpy()
    gap = float(np.abs(net.logits(d["hx"][:64]) - ref).max())
    acc = float((net.logits(d["hx"]).argmax(1) == d["hy"]).mean())
    log(f"wrote {args.out} ({args.out.stat().st_size} bytes); OpenCV DNN: held-out real {acc:.4f}, largest logit "
        f"difference to torch {gap:.2e}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
