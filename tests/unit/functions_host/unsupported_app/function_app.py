"""A function app with a trigger the local host does not run (a blob trigger), to check that it is refused at start."""

import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)


@app.blob_trigger(arg_name="blob", path="uploads/{name}", connection="AzureWebJobsStorage")
def on_upload(blob: func.InputStream) -> None:
    return None
