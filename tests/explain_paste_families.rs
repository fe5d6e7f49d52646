//! The ways a log reaches `explain` damaged, one family at a time, on logs written for this
//! test (not taken from the labelled sets): a page translation that turned the punctuation
//! full-width and the assertion's words into another language, a known message pasted
//! without its exception type or inside quotes, GPU threads printing over each other,
//! anomaly mode's NaN check, and tracebacks that stop before their message.

#[path = "explain_support/labelled.rs"]
mod labelled;

use std::path::PathBuf;

/// `explain --json` on `text`, as (cause, frame, confidence).
fn explain(name: &str, text: &str) -> (String, String, String) {
    let dir = std::env::temp_dir().join(format!("assertscope-paste-families-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(format!("{name}.log"));
    std::fs::write(&path, text).unwrap();
    let (cause, frame) = labelled::explain_file(&path);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let confidence = json["diagnoses"][0]["confidence"].as_str().unwrap_or("-").to_string();
    (cause, frame, confidence)
}

#[test]
fn a_translated_assertion_line_is_read_by_its_kernel_file_and_function() {
    // Japanese page translation: full-width colons and brackets, block and thread and the
    // assertion's words translated, the condition lost.
    let log = "\
/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu\u{ff1a}93\u{ff1a}operator\u{ff08}\u{ff09}\u{ff1a}\u{30d6}\u{30ed}\u{30c3}\u{30af}\u{ff1a}[12,0,0]\u{ff0c}\u{30b9}\u{30ec}\u{30c3}\u{30c9}\u{ff1a}[5,0,0] \u{30a2}\u{30b5}\u{30fc}\u{30b7}\u{30e7}\u{30f3}\u{304c}\u{5931}\u{6557}\u{3057}\u{307e}\u{3057}\u{305f}\u{3002}
/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu\u{ff1a}93\u{ff1a}operator\u{ff08}\u{ff09}\u{ff1a}\u{30d6}\u{30ed}\u{30c3}\u{30af}\u{ff1a}[12,0,0]\u{ff0c}\u{30b9}\u{30ec}\u{30c3}\u{30c9}\u{ff1a}[6,0,0] \u{30a2}\u{30b5}\u{30fc}\u{30b7}\u{30e7}\u{30f3}\u{304c}\u{5931}\u{6557}\u{3057}\u{307e}\u{3057}\u{305f}\u{3002}
";
    assert_eq!(explain("translated-index", log).0, "index-out-of-bounds");
    // The lambda of binary_cross_entropy in Loss.cu: file and function together name it,
    // though Loss.cu also holds nll_loss's kernels.
    let log = "Hata: ../aten/src/ATen/native/cuda/Loss.cu\u{ff1a}94\u{ff1a} operator\u{ff08}\u{ff09}\u{ff1a} blok\u{ff1a} [3,0,0]\u{ff0c} i\u{15f}\u{e7}i\u{ff1a} [17,0,0] onaylama ba\u{15f}ar\u{131}s\u{131}z oldu.\n";
    assert_eq!(explain("translated-bce", log).0, "bce-input-range");
}

#[test]
fn a_lambda_names_no_kernel_without_its_file() {
    // `operator()` in a file whose checks the knowledge base does not know: no guess.
    let log = "/src/ext/my_ops.cu:40: operator(): block: [0,0,0], thread: [0,0,0]\n";
    assert_ne!(explain("unknown-lambda", log).0, "bce-input-range");
}

#[test]
fn a_known_message_without_its_exception_type() {
    let log = "after model.to(device) the eval loop still dies with -> Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:1\n";
    assert_eq!(explain("bare-device", log).0, "device-mismatch");
    let log = "my labels go from 1 to 10, and I get Target 10 is out of bounds. every epoch\n";
    assert_eq!(explain("bare-target", log).0, "target-out-of-range");
}

#[test]
fn a_quoted_exception_line() {
    let log = "The val step fails with\n'ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 128])'\nany idea?\n";
    assert_eq!(explain("quoted-bn", log).0, "batchnorm-single-sample");
}

#[test]
fn threads_printing_over_each_other() {
    let log = "\
/tmp/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [7,0,0], thread: [64/tmp/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [7,0,0], thread: [65,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\",0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.
";
    assert_eq!(explain("interleaved", log).0, "index-out-of-bounds");
}

#[test]
fn anomaly_mode_nan_names_the_exceptions_own_frame() {
    let log = "\
/usr/lib/python3.10/site-packages/torch/autograd/__init__.py:251: UserWarning: Error detected in LogBackward0. Traceback of forward call that caused the error:
  File \"/work/vae/run.py\", line 88, in <module>
    main()
  File \"/work/vae/model.py\", line 41, in loss
    return -(x * torch.log(p)).sum()
 (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:118.)
Traceback (most recent call last):
  File \"/work/vae/run.py\", line 88, in <module>
    main()
  File \"/work/vae/run.py\", line 73, in main
    total.backward()
  File \"/usr/lib/python3.10/site-packages/torch/_tensor.py\", line 522, in backward
    torch.autograd.backward(
RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.
";
    let (cause, frame, _) = explain("anomaly", log);
    assert_eq!(cause, "nan-inf");
    assert_eq!(frame, "/work/vae/run.py:73");
}

#[test]
fn a_traceback_cut_before_its_message_still_gives_the_users_frame() {
    let log = "\
Traceback (most recent call last):
  File \"/srv/jobs/finetune/main.py\", line 210, in <module>
    trainer.fit(model, dm)
  File \"/srv/jobs/finetune/main.py\", line 155, in fit
    out = self.backbone(batch[\"pixel_values\"])
  File \"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1751, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File \"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1762, in _call_impl
";
    let (cause, frame, confidence) = explain("cut-unknown", log);
    assert_eq!(cause, "none");
    assert_eq!(frame, "/srv/jobs/finetune/main.py:155");
    assert_eq!(confidence, "low");
    // Any error the log does show comes before such a fragment.
    let with_error = format!("{log}RuntimeError: CUDA error: out of memory\n");
    assert_eq!(explain("cut-then-oom", &with_error).0, "out-of-memory");
}

#[test]
fn a_message_inside_richs_locals_panel() {
    let log = "\
\u{2502} \u{2502}      batch = {                                                        \u{2502} \u{2502}
\u{2502} \u{2502}              'x': <repr-error 'CUDA error: an illegal memory access    \u{2502} \u{2502}
\u{2502} \u{2502}              was encountered\\nCUDA kernel errors might be'>,          \u{2502} \u{2502}
";
    assert_eq!(explain("rich-locals", log).0, "illegal-memory-access");
}

#[test]
fn a_cut_notebook_traceback_names_its_type_in_the_header() {
    let cut = |header: &str| {
        format!(
            "\
---------------------------------------------------------------------------
{header}                                Traceback (most recent call last)
<ipython-input-7-0a1b2c3d4e5f> in <module>
      9     for xb, yb in dl:
     10         logits = net(xb.cuda())
---> 11         l = loss_fn(logits, yb.cuda())
     12         l.backward()

/usr/local/lib/python3.8/dist-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)
    725             result = self._slow_forward(*input, **kwargs)
"
        )
    };
    let (cause, frame, confidence) = explain("cut-index-error", &cut("IndexError"));
    assert_eq!(cause, "target-out-of-range");
    assert_eq!(frame, "<ipython-input-7-0a1b2c3d4e5f>:11");
    assert_eq!(confidence, "low");
    // Another type says nothing of the targets.
    assert_eq!(explain("cut-runtime-error", &cut("RuntimeError")).0, "none");
}

#[test]
fn pytorch_04s_named_tensor_types() {
    let log = "loss = F.smooth_l1_loss(pred, gt)  ->  RuntimeError: Expected object of type torch.cuda.FloatTensor but found type torch.cuda.LongTensor for argument #2 'target'\n";
    assert_eq!(explain("legacy-target-type", log).0, "target-dtype");
    let log = "RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #2 'weight'\n";
    assert_eq!(explain("legacy-device-type", log).0, "device-mismatch");
}
