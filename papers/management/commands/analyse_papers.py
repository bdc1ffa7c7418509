from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from papers import analysis
from wovepaper.lib import llm


class Command(BaseCommand):
    help = (
        "Analyse the newest papers without a current analysis, in this process (with a model "
        "configured, each paper is one model call). Safe to rerun: current analyses are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=1000)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, limit: int, no_progress: bool, **options):
        papers = analysis.papers_needing_analysis()[:limit]
        bar = tqdm(
            total=min(limit, papers.count()),
            unit=" papers",
            disable=no_progress or options["verbosity"] == 0,
            file=self.stderr._out,
        )
        done = failed = 0
        for paper in papers.iterator():
            try:
                analysis.analyse_paper(paper)
            except llm.ModelError as exc:
                failed += 1
                self.stderr.write(f"{paper.arxiv_id}: not analysed: {exc}")
                if isinstance(exc, llm.ModelRateLimited):
                    self.stderr.write("stopping: the model's service is rate-limiting us")
                    break
            else:
                done += 1
            bar.update(1)
        bar.close()
        model = llm.model_name() or "no model (computed parts only)"
        self.stdout.write(f"analysed {done} papers with {model}; {failed} not analysed")
