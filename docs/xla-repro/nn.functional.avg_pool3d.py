#!/usr/bin/env python3
"""Reproduces crossdev case opinfo.xla/nn.functional.avg_pool3d/xla/float32/forward
(bundle bundle.json; `crossdev repro`, docs/repro.md). Needs only torch and torch_xla.

crossdev's verdict: xfail: expected failure (accepted: (torch_xla 2.9.0 on torch 2.9.0) 2 of 4 samples differ from the CPU; first: sample 1 shapes [(1, 2, 4, 4, 4)]: output[0]: Mismatched elements: 196 / 250 (78.4%), first at [0, 0, 0, 0, 0]: actual -13.9078245 vs expected -1.73847806; m..., matrices/xla/expectations/opinfo/xla.yaml:64): 2 of 4 samples differ from the CPU; first: sample 1 shapes [(1, 2, 4, 4, 4)]: output[0]: Mismatched elements: 196 / 250 (78.4%), first at [0, 0, 0, 0, 0]: actual -18.6457977 vs expected -2.33072472; max_abs=30.3988633, max_rel=7, max_ulp=63751037, ulp_floor=7.69230769 (rtol=1.3e-06, ato

The case: nn.functional.avg_pool3d (forward, variant function, float32), op_db sample 1,
made on xla:0 and copied to the CPU; these are its exact values. The call is torch.nn.functional.avg_pool3d
. Tolerance: rtol=1.3e-06,
atol=1e-05 (crossdev per-dtype table), torch.testing.assert_close with equal_nan=True.
Recorded with torch 2.9.0+cu128.
The 1 sample(s) the case ran on the device before this one (op_db samples 0) run first, in the same order, their results unused:
a device that reuses a compiled graph for another argument fails only after them; --alone skips them.

    python3 repro.py [--device DEV] [--alone]   # default xla; exit 1 while the device differs from the CPU
                                           # (differs), 0 once fixed
"""
import argparse
import os
import sys

import torch

parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
parser.add_argument("--device", default='xla', help="the device to run on (default: %(default)s); cpu: the golden itself")
parser.add_argument("--alone", action="store_true", help="the failing sample alone, without the samples the case ran before it")
ARGS = parser.parse_args()
DEVICE_ARG = ARGS.device
if DEVICE_ARG.split(":")[0] == "xla":
    import torch_xla  # noqa: F401  (registers the xla device)

CHECK, VARIANT, KIND = 'forward', 'function', 'mismatch'
RTOL, ATOL = 1.3e-06, 1e-05
SEED = 1
N_SAMPLE_TENSORS = 1  # forward: the sample's tensors are compared after the call too
# the numerics switches the case ran with (crossdev's parity mode turns TF32 off on cuda)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = True


nan, inf = float("nan"), float("inf")  # the literals below spell non-finite values so


def _tensor(values, dtype, shape, requires_grad):
    return torch.tensor(values, dtype=dtype).reshape(shape).requires_grad_(requires_grad)


def _complex(values, real_dtype, shape, requires_grad):
    return torch.view_as_complex(torch.tensor(values, dtype=real_dtype).reshape(*shape, 2)).requires_grad_(requires_grad)


T = [
    _tensor([-4.661449432373047, 2.156238555908203, 5.015406608581543, 4.769645690917969, -8.640399932861328, 6.856923580169678, 3.755030393600464, 2.7459769248962402, 5.480424880981445, -7.712095260620117, 3.1023051738739014, -0.8585193157196045, 7.410554885864258, -5.402751922607422, 8.488862991333008, 5.734667778015137, -2.0810272693634033, 8.832962989807129, -5.203174591064453, -8.868539810180664, 4.360018730163574, 4.79151725769043, -3.9585349559783936, -2.937218427658081, -8.21916389465332, 0.7994742393493652, -5.2022624015808105, 4.447426795959473, -8.748148918151855, 1.1490583419799805, -1.5377039909362793, 8.393230438232422, -3.6431243419647217, 0.15884041786193848, -1.9288966655731201, -6.297425270080566, 3.380439519882202, -0.6633381843566895, -5.9566650390625, 3.0035226345062256, -1.520784616470337, 8.498126983642578, -4.071155548095703, 2.5462124347686768, -4.3388872146606445, -3.5399601459503174, -5.39957857131958, 6.047331809997559, 8.685389518737793, 8.970704078674316, -6.9233503341674805, -1.8187587261199951, 2.7061879634857178, -2.0737080574035645, -1.1016690731048584, 4.960732460021973, 8.43374252319336, -8.903165817260742, 4.004866600036621, -2.9483163356781006, 2.0395452976226807, 3.7009871006011963, 7.2865705490112305, 1.0033113956451416, 0.3578066825866699, -6.743483543395996, 1.296485424041748, -4.545769214630127, 0.786170482635498, -3.261587619781494, 7.745734691619873, -5.44484806060791, -2.4786593914031982, 5.920285224914551, 5.692145347595215, -5.319588661193848, 0.11098766326904297, -0.7017602920532227, -1.2483365535736084, -2.2288126945495605, 5.210819721221924, 2.8718647956848145, 3.660590887069702, 3.813581943511963, -8.263362884521484, 6.405934810638428, 6.062101364135742, 2.7832274436950684, -1.70487642288208, 3.578974485397339, 1.546926498413086, -3.045485258102417, 5.10910177230835, -8.396567344665527, -8.449110984802246, 7.497628211975098, 0.005834341049194336, -5.025002479553223, -4.7964935302734375, 3.995948553085327, 4.643238544464111, 1.9268217086791992, 5.351893424987793, -4.23000431060791, -2.128929376602173, -1.398935079574585, -0.033368825912475586, 7.163233757019043, -8.188333511352539, -0.18092036247253418, 6.32839298248291, -6.453188896179199, 7.617271900177002, -2.397742509841919, -8.633071899414062, -8.623956680297852, 0.4449269771575928, 8.196159362792969, -0.5291290283203125, 1.8054957389831543, -2.817190647125244, -2.4610555171966553, 5.265536785125732, 1.4229934215545654, -0.9740109443664551, -7.196808815002441, 0.1247098445892334, 4.3426337242126465], torch.float32, (1, 2, 4, 4, 4), False),
    _tensor([-6.133594036102295, -3.498924493789673, -2.2058615684509277, -6.750473976135254, -4.607200622558594, 8.493358612060547, -3.183211326599121, -3.6792612075805664, -1.3285539150238037, -2.8731565475463867, -1.402801752090454, -1.2583122253417969, -8.770121574401855, -6.418139934539795, 4.453685760498047, -7.512569427490234, -6.973164081573486, 2.974597692489624, 0.08936691284179688, -8.990172386169434, -0.551814079284668, -0.306567907333374, -2.240236759185791, -7.539322853088379, 3.3079469203948975, 4.496322154998779, 2.6301591396331787, -4.507759094238281, 8.883984565734863, 3.3759613037109375, -4.274951934814453, 5.471742630004883, 4.953469276428223, -4.703272819519043, -0.3785884380340576, -5.590427398681641, -3.4941952228546143, -5.785527229309082, 0.7372941970825195, -8.320791244506836, -0.4423863887786865, 0.9160215854644775, 8.14527702331543, -2.420212984085083, 1.4356083869934082, 0.22913789749145508, -2.524503707885742, -2.7789273262023926, -7.414949417114258, 7.245019912719727, 6.352353096008301, -1.718212366104126, 3.3033270835876465, -7.0669941902160645, -8.262598037719727, -6.248781204223633, 1.0765249729156494, 3.6395602226257324, 4.862420082092285, -6.16910457611084, -7.58915376663208, 4.974626541137695, -3.6285030841827393, 0.2907900810241699, -5.4551496505737305, 5.627100944519043, -3.543713092803955, -3.933931589126587, 1.3048474788665771, 0.9420690536499023, 1.3722546100616455, 0.36240291595458984, 2.1276397705078125, -5.134020805358887, 2.6590969562530518, -3.4118642807006836, -7.147003173828125, 7.932547569274902, 1.9889717102050781, -4.259871482849121, 4.848957538604736, -8.143255233764648, 3.882538318634033, 0.8123939037322998, 0.5448853969573975, -0.9597029685974121, -6.053773880004883, -7.634622573852539, 8.056364059448242, 6.181105613708496, -6.529928207397461, -1.350966453552246, -0.2777566909790039, 5.502710342407227, 7.245736598968506, 4.031791687011719, 1.2047324180603027, 5.308342933654785, -0.6763544082641602, -5.2296295166015625, 2.3466732501983643, 3.7962849140167236, -1.9788672924041748, -4.983449935913086, 1.1199767589569092, -4.057008743286133, -5.934509754180908, -0.4067537784576416, -5.1328229904174805, 5.262049674987793, -4.68931245803833, 0.5431838035583496, 8.939682006835938, 5.746452331542969, 8.199723243713379, 1.4664280414581299, 5.912101745605469, -4.131994247436523, -2.785680055618286, -1.470146656036377, 5.260271072387695, -1.5206687450408936, -4.571260929107666, -7.818665027618408, 2.098485231399536, 1.7088675498962402, 6.490606784820557, -7.208629608154297, 4.572775840759277, -5.486093521118164, 1.4847314357757568, 2.582508087158203, 6.494185924530029, 5.272184371948242, 0.048970699310302734, -7.124438285827637, 6.91265344619751, 2.1473207473754883, 2.773670196533203, 1.316483974456787, -3.8255317211151123, 5.741261959075928, 1.915165901184082, -4.87188720703125, -4.425205230712891, -7.026144981384277, -7.0665283203125, -8.711256980895996, 1.900261402130127, -6.494091510772705, 1.279033899307251, -4.5727739334106445, 5.9580078125, -0.14807939529418945, -1.3888564109802246, 4.5504984855651855, -4.233442306518555, -5.368475914001465, -4.530804634094238, 1.7727813720703125, -8.347302436828613, -8.67365837097168, 1.5952277183532715, 0.9930567741394043, -2.4365615844726562, -3.4758574962615967, 8.008228302001953, 4.845178604125977, 6.1869354248046875, 8.717620849609375, -0.5947616100311279, 2.963034152984619, 2.152045726776123, -1.9563775062561035, -6.159624099731445, -0.2691349983215332, -7.564228534698486, 6.077342987060547, -3.1387338638305664, 7.048688888549805, -2.2375802993774414, 8.628700256347656, 1.6044566631317139, -1.976938247680664, -8.160297393798828, 2.983339548110962, -4.2711687088012695, 4.4582109451293945, -7.661417007446289, -5.920111656188965, 5.558828830718994, -5.640852928161621, 3.848888397216797, -2.120565176010132, -7.357250213623047, -5.175867080688477, -8.866230964660645, -2.2939367294311523, -7.046409606933594, -3.9026570320129395, 0.4006211757659912, 7.221652507781982, 8.67685604095459, 0.907444953918457, -3.5012269020080566, -1.7102150917053223, -0.5489301681518555, -8.408418655395508, 3.2841010093688965, 6.798264503479004, 0.4438498020172119, -8.235761642456055, 8.285706520080566, -4.8416643142700195, -0.15844130516052246, 0.06954646110534668, 3.980241537094116, -4.381234169006348, -2.840768337249756, 0.15370988845825195, -6.926169395446777, 5.838557243347168, 7.316263675689697, -6.1893110275268555, 8.57856273651123, 5.018930435180664, 1.8139092922210693, 4.664590835571289, -8.098590850830078, -3.215869903564453, 3.2857489585876465, 1.2677257061004639, -7.504494667053223, -2.9095616340637207, -6.591037273406982, -0.18601012229919434, 6.715386390686035, 5.620262145996094, -3.1825010776519775, -2.2160797119140625, -1.5048179626464844, 8.548142433166504, 6.654075622558594, -0.22895550727844238, 7.440349102020264, 8.108510971069336, -0.6576797962188721, -0.0321199893951416, -8.503785133361816, -1.8095791339874268, 3.8922200202941895, -2.780710458755493, -8.331677436828613, -8.239087104797363, 8.74110221862793, 6.55369234085083, -1.6096580028533936, 1.8293824195861816, -8.487820625305176, -4.022716999053955, -4.210165023803711, 7.272830963134766, -5.328401565551758, 3.100667953491211, 5.187064170837402, -4.631662368774414, -4.313251495361328, 1.7267096042633057, 2.2939066886901855, -2.6604294776916504, -6.760083198547363, -1.1364305019378662, -2.4828994274139404, -2.753122329711914, -7.507719993591309, -0.37325406074523926, -6.316887855529785, 8.178521156311035, 0.08673834800720215, 6.427600860595703, 6.808982849121094, 1.7983911037445068, 7.499587059020996, -0.3242640495300293, 3.3009774684906006, -3.1285629272460938, 2.4235496520996094, -7.2818498611450195], torch.float32, (2, 3, 3, 4, 4), False),
]


def sample(device):
    """The sample on `device`: (input, args, kwargs), fresh copies (an op may update its inputs in place),
    requires_grad kept."""
    moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
    return _with(moved, device)


def _with(T, device):
    return (T[0], (2,), {'stride': 1, 'padding': 1, 'ceil_mode': True, 'count_include_pad': False, 'divisor_override': 2})


# (op_db sample, seed, the sample from T) of the samples the case ran on the device before this one, in order
BEFORE = [
    (0, 0, lambda T, device: (T[1], ((2, 2, 2),), {})),
]


def flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in flatten(item)]
    if isinstance(x, dict):
        return [y for item in x.values() for y in flatten(item)]
    return [x]


def empty_like_on(template, device):
    if isinstance(template, torch.Tensor):
        return torch.empty_like(template.detach(), device=device)
    return tuple(empty_like_on(t, device) for t in template)


def call(inp, args, kwargs, device):
    """The case's call (function variant)."""
    fn = torch.nn.functional.avg_pool3d
    if VARIANT == "inplace":
        return fn(inp.clone(), *args, **kwargs)
    if VARIANT == "out":
        template = fn(*[_cpu(x) for x in (inp,)], *_cpu(args), **_cpu(kwargs))
        out = empty_like_on(template, device)
        fn(inp, *args, **kwargs, out=out)
        return out
    return fn(inp, *args, **kwargs)


def _cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu")
    if isinstance(x, tuple):
        return tuple(_cpu(y) for y in x)
    if isinstance(x, list):
        return [_cpu(y) for y in x]
    if isinstance(x, dict):
        return {k: _cpu(y) for k, y in x.items()}
    return x


def process(result):
    """op_db's output_process_fn_grad of the sample, applied to both results (none: the identity)."""
    return result


def run(device):
    """The results crossdev compared: the outputs (forward) or the inputs' gradients (backward), after the
    samples the case ran before this one (BEFORE; not with --alone), on the same device, results unused."""
    for _, seed, make in ([] if ARGS.alone else BEFORE):
        torch.manual_seed(seed)
        moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
        try:
            results(*make(moved, device), device)
        except Exception as e:  # the case went on past a sample that raised: so does the script
            print(f"{device}: an earlier sample raised {type(e).__name__}: {str(e)[:200]}")
    torch.manual_seed(SEED)
    return results(*sample(device), device)


def results(inp, args, kwargs, device):
    """One sample's results, on the CPU (on a lazy device, copying them runs the graph)."""
    result = process(call(inp, args, kwargs, device))
    if CHECK == "forward":  # the outputs, then the sample's tensors after the call (an op updates some in place)
        values = flatten(result) + [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor)]
        return [t.detach().to("cpu") if isinstance(t, torch.Tensor) else t for t in values]
    outs = [t for t in flatten(result) if isinstance(t, torch.Tensor) and t.requires_grad]
    inputs = [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]
    grad_outputs = []
    grads = torch.autograd.grad(outs, inputs, [g.to(o.device) for g, o in zip(grad_outputs, outs)], allow_unused=True)
    return [g.detach().to("cpu") if g is not None else None for g in grads]


def worst(actual, expected):
    """The element farthest outside the tolerance: (index, actual, expected)."""
    a, e = actual.to(torch.complex128 if actual.is_complex() else torch.float64), expected.to(
        torch.complex128 if expected.is_complex() else torch.float64)
    excess = (a - e).abs() - (ATOL + RTOL * e.abs())
    excess = torch.where(torch.isnan(excess) & ~(torch.isnan(a) & torch.isnan(e)), torch.full_like(excess, float("inf")), excess)
    excess = torch.nan_to_num(excess, nan=float("-inf"))
    flat = int(excess.reshape(-1).argmax()) if excess.numel() else 0
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), actual.shape)) if actual.dim() else ()
    return index, actual[index].item() if actual.numel() else None, expected[index].item() if expected.numel() else None


def main():
    device = DEVICE_ARG
    if KIND == "raised":  # the device raised on this sample: the call alone
        try:
            result = run(device)
            print(f"{device}: the call returned without raising ({len(result)} result(s)): fixed")
            return 0
        except Exception as e:  # the device's error, as crossdev recorded it
            print(f"{device}: the call raised {type(e).__name__}: {e}")
            return 1
    expected = run("cpu")
    actual = run(device)
    if len(actual) != len(expected):
        print(f"{device} returned {len(actual)} values, the CPU {len(expected)}")
        return 1
    failed = 0
    for i, (a, e) in enumerate(zip(actual, expected)):
        outputs = len(actual) - N_SAMPLE_TENSORS if CHECK == "forward" else len(actual)
        label = f"input {i - outputs} after the call" if i >= outputs else             ("output" if CHECK == "forward" else "grad") + f"[{i}]"
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
            except AssertionError as mismatch:
                failed += 1
                print(f"{label} differs on {device} (rtol={RTOL}, atol={ATOL}):\n{mismatch}")
                if a.shape == e.shape and a.numel():
                    index, av, ev = worst(a, e)
                    print(f"worst element {list(index)}: {device} {av!r}, cpu {ev!r}")
                print(f"{device}:\n{a}\ncpu:\n{e}")
        elif a != e and not (a != a and e != e):
            failed += 1
            print(f"{label}: {a!r} on {device}, {e!r} on the CPU")
    if failed:
        print(f"FAIL: {failed} of {len(expected)} result(s) differ from the CPU")
        return 1
    print(f"OK: {device} agrees with the CPU on all {len(expected)} result(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
