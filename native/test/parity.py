"""Pixel parity of the native transform against the trainer-side reference.

With the project's torch venv (/root/.cache/scylla-loader/python/venv-*/.complete): torchvision
decode_jpeg/decode_png (EXIF applied) + v2.functional.resized_crop(antialias=True). Otherwise
PIL: open, exif_transpose, convert('RGB'/'L'), crop(box).resize(size, BILINEAR).

    python native/test/parity.py      (needs numpy and PIL, or the torch venv)
Prints mean and max absolute difference per case; exits 1 when a mean exceeds 1.0.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import torch
    from torchvision.io import ImageReadMode, decode_image
    from torchvision.transforms.v2 import functional as F

    REFERENCE = 'torchvision'
except ImportError:
    REFERENCE = 'PIL'


def reference(path, channels, region, size):
    left, top, w, h = region
    if REFERENCE == 'torchvision':
        data = torch.frombuffer(bytearray(open(path, 'rb').read()), dtype=torch.uint8)
        mode = ImageReadMode.RGB if channels == 3 else ImageReadMode.GRAY
        img = decode_image(data, mode=mode, apply_exif_orientation=True)
        out = F.resized_crop(img, top, left, h, w, [size[1], size[0]], antialias=True)
        return out.permute(1, 2, 0).numpy()
    img = ImageOps.exif_transpose(Image.open(path)).convert('RGB' if channels == 3 else 'L')
    out = img.crop((left, top, left + w, top + h)).resize(size, Image.BILINEAR)
    return np.asarray(out).reshape(size[1], size[0], channels)


def main():
    work = tempfile.mkdtemp(prefix='parity-')
    subprocess.run(['node', os.path.join(HERE, 'fixtures.mjs'), work], check=True)
    cases = []
    for name, channels in [('photo.jpg', 3), ('progressive.jpg', 3), ('photo.jpg', 1), ('grey.jpg', 1),
                           ('grey.jpg', 3), ('cmyk.jpg', 3), ('exif6.jpg', 3), ('rgb.png', 3),
                           ('rgba.png', 3), ('grey28.png', 1)]:
        img = ImageOps.exif_transpose(Image.open(os.path.join(work, name)))
        W, H = img.size
        windows = [
            ('down 400x300->224', (37, 41, min(400, W - 37), min(300, H - 41)), (224, 224)),
            ('up 100x80->224', (W // 5, H // 5, 100, 80), (224, 224)),
            ('whole->224', (0, 0, W, H), (224, 224)),
            ('whole->56 (DCT 1/2)', (0, 0, W, H), (56, 56)),
            ('whole->32 (DCT 1/4)', (0, 0, W, H), (32, 32)),
        ]
        if W < 150:
            windows = [('down', (3, 2, W - 5, H - 4), (W // 2, H // 2)), ('up', (3, 2, W - 5, H - 4), (224, 224))]
        for label, region, size in windows:
            cases.append((name, channels, label, region, size))
    jobs = []
    for i, (name, channels, label, (l, t, w, h), (ow, oh)) in enumerate(cases):
        plan = dict(source=dict(zip(('width', 'height'), ImageOps.exif_transpose(Image.open(os.path.join(work, name))).size)),
                    region=dict(left=l, top=t, width=w, height=h), output=dict(width=ow, height=oh),
                    flip=False, width=ow, height=oh, channels=channels, interpolation='bilinear', maxPixels=1e9)
        jobs.append(dict(input=os.path.join(work, name), plan=plan, output=os.path.join(work, f'out{i}.raw')))
    with open(os.path.join(work, 'jobs.json'), 'w') as f:
        json.dump(jobs, f)
    subprocess.run(['node', os.path.join(HERE, 'run-plan.mjs'), os.path.join(work, 'jobs.json')], check=True)
    print(f'reference: {REFERENCE}')
    print(f'{"image":16} {"ch":>2} {"case":22} {"mean":>6} {"max":>4}')
    worst = 0.0
    for (name, channels, label, region, size), job in zip(cases, jobs):
        ours = np.fromfile(job['output'], dtype=np.uint8).reshape(size[1], size[0], channels).astype(int)
        ref = reference(job['input'], channels, region, size).astype(int)
        diff = np.abs(ours - ref)
        worst = max(worst, diff.mean())
        print(f'{name:16} {channels:2} {label:22} {diff.mean():6.3f} {diff.max():4d}')
    print(f'worst mean abs diff: {worst:.3f}')
    return 0 if worst <= 1.0 else 1


if __name__ == '__main__':
    sys.exit(main())
