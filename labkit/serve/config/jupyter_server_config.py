# jupyter_server configuration for `make lab` (passed with --config): course notebooks are saved
# without their outputs and widget state (labkit.serve.presave), so a class leaves the checkout
# clean and a reopened lesson never shows "Error displaying widget: model not found".
c = get_config()  # noqa: F821
c.FileContentsManager.pre_save_hook = "labkit.serve.presave.pre_save_hook"
