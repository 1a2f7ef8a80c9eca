"""The verification platform: problems with versioned contracts, submissions judged under the
revision they were made under, and an append-only record of every run (in ``assay.ledger``)."""

from assay.platform._allowance import AllowanceUsed
from assay.platform._archive import ArchiveLimits, extract_problem_archive, publish_archive
from assay.platform._campaigns import CampaignView
from assay.platform._contract import Contract, ExternalStage, ReviewStage, Role, SandboxStage
from assay.platform._folder import Draft, FolderInvalid, load_folder
from assay.platform._platform import Platform, Work
from assay.platform._preflight import Preflight, preflight
from assay.platform._read import when
from assay.platform._review_report import review_report
from assay.platform._reviews import ClaimView, RespondView, ReviewRecord, SeatsView, UserView
from assay.platform._revision import Binding, Policy, Revision
from assay.platform._verifiers import VerifierView, verifier_view
from assay.platform._views import (
    ProblemView,
    Published,
    Revocation,
    RunView,
    SubmissionView,
    Verdict,
)

__all__ = [
    "AllowanceUsed",
    "ArchiveLimits",
    "Binding",
    "CampaignView",
    "ClaimView",
    "Contract",
    "Draft",
    "ExternalStage",
    "FolderInvalid",
    "Platform",
    "Policy",
    "Preflight",
    "ProblemView",
    "Published",
    "RespondView",
    "ReviewStage",
    "ReviewRecord",
    "Revision",
    "Revocation",
    "Role",
    "RunView",
    "SandboxStage",
    "SeatsView",
    "SubmissionView",
    "UserView",
    "VerifierView",
    "Verdict",
    "Work",
    "extract_problem_archive",
    "load_folder",
    "preflight",
    "publish_archive",
    "review_report",
    "verifier_view",
    "when",
]
