import re

# How model files parse their config strings (EfficientNet's block strings), at module level.
block = "r1_k3_s11_e6_i16_o24_se0.25"
options = {}
for op in block.split("_"):
    splits = re.split(r"(\d.*)", op)
    if len(splits) >= 2:
        key, value = splits[:2]
        options[key] = value
print(options)
print(re.match(r"([a-z]+)(\d+)", "layer12").groups(), re.fullmatch(r"[a-z]+", "abc") is not None)
print(re.sub(r"[_ ]+", "-", "a_b  c"), re.findall(r"\d+", "x1y22z333"))
pattern = re.compile(r"^blocks\.(\d+)\.(\w+)$", re.IGNORECASE)
print(pattern.match("Blocks.3.conv").group(1, 2), re.escape("a.b*c"), re.I | re.M)
