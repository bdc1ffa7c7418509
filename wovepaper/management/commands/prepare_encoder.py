import time

from django.core.management.base import BaseCommand

from wovepaper.lib.embeddings import text_encoder


class Command(BaseCommand):
    help = (
        "Make the configured sentence encoder's model files (the ONNX export from the bundled "
        "weights takes minutes, once per machine) and load them once, so that no web or embed "
        "worker does it on a first request. Run it at deploy time, after migrate."
    )

    def handle(self, *args, **options):
        encoder = text_encoder()
        was_prepared = encoder.is_prepared()
        started = time.perf_counter()
        encoder.prepare()
        elapsed = time.perf_counter() - started
        done = "was already prepared; loaded" if was_prepared else "prepared"
        self.stdout.write(f"{encoder.name}: {done} in {elapsed:.1f} s")
