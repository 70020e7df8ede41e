"""A function app with a trigger the local host does not run (a timer), to check that it is refused at start."""
import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)


@app.timer_trigger(schedule="0 */5 * * * *", arg_name="timer")
def every_five_minutes(timer: func.TimerRequest) -> None:
    return None
