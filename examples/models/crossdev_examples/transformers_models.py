"""The models users bring most: Hugging Face transformers' GPT-2 and BERT, at random init from a config
(no download, no tokenizer), at a width and depth a CPU runner can afford. No crossdev op inside.

    tiny_gpt2   GPT2LMHeadModel: 2 layers, 64 wide, lm_head tied to the token embedding (tie_word_embeddings,
                transformers' default), its key/value cache on (use_cache, the default: a Cache object is
                passed to every block), eval(); input: token ids (2 x 16)
    tiny_bert   BertForMaskedLM: 2 layers, 64 wide, the MLM decoder tied to the word embedding; inputs: token
                ids and an attention mask with padding in the second sequence, eval()

Both use the exact GELU (aten::gelu), BERT's default; GPT-2's own default (gelu_new) is the same curve
written as Python arithmetic. The tie is what a device's `.to()` may break (docs/models.md, "Shared
parameters"): on xla every module gets a Parameter of its own, and transformers' remedy is
`model.tie_weights()` after the move.

The rows that run them (matrices/models/models_transformers.yaml) name `requires: [transformers]`: where the
package is absent their cases are `skip`, with the reason."""
import torch

SEED, BATCH, LENGTH, VOCAB = 0, 2, 16, 128


def _ids(seed):
    return torch.randint(0, VOCAB, (BATCH, LENGTH), generator=torch.Generator().manual_seed(seed))


def tiny_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(SEED)
    config = GPT2Config(vocab_size=VOCAB, n_positions=2 * LENGTH, n_embd=64, n_layer=2, n_head=4,
                        activation_function="gelu", bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config).eval(), (_ids(SEED + 1),)


def tiny_bert():
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(SEED)
    config = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=2 * LENGTH, pad_token_id=0)
    mask = torch.ones(BATCH, LENGTH, dtype=torch.long)
    mask[1, LENGTH // 2:] = 0  # the second sequence is padded: the attention mask matters
    return BertForMaskedLM(config).eval(), (_ids(SEED + 2), mask)
