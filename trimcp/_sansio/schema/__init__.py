"""Typed MCP objects for every revision, 2024-11-05 to 2026-07-28, and their wire form.

Theory of operation
-------------------
One class per object, carrying the union of the members of all five spec
revisions (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 of the handshake
era, 2026-07-28 of the stateless era); members a revision lacks are simply
``None``.  A member that some revision makes optional is optional in the class
(``elicitationId``, ``resultType``, ``ttlMs`` …); the rules of one revision are
applied by the per-revision tables (``request_types(revision)``,
``parse_result(..., revision=...)``).

``from_wire(cls, data)`` turns a decoded JSON object into an instance,
checking required members and JSON types and raising ``SchemaError`` with the
JSON path of the first problem; ``to_wire(obj)`` turns an instance (or a map of
instances, such as ``InputRequests``) back into a JSON-ready value.  Unknown
members are kept in ``extra`` and ``_meta`` in ``meta``, so
``to_wire(from_wire(cls, d)) == d`` for every valid ``d``.

Modules: the machinery is ``_converter`` (the one cattrs converter), ``_rules``
(wire names, JSON types, ``SchemaError``), ``_hooks`` (primitives, arrays, maps,
unions) and ``_classes`` (generated per-class functions); the types are in
``base``, ``content``, ``lifecycle``, ``tools`` (the definition, ``tools/list``),
``tool_calls`` (``tools/call``), ``resources``, ``prompts`` (and completion),
``sampling``, ``elicitation``, ``tasks`` and ``misc`` (logging, progress,
cancellation, roots); the 2026-07-28 additions in ``meta`` (reserved
``_meta`` keys, the request envelope), ``modern`` (discovery, subscriptions,
error data) and ``mrtr`` (multi round-trip requests); ``methods`` holds the
method tables, overall and per revision.

Import cost: nothing of cattrs is imported with the package.  The converter, every type
and every table is a lazy module attribute (PEP 562 ``__getattr__``, the ``_LAZY`` table),
built when a typed view is first asked for: a client that only connects and passes wire
dicts never imports cattrs, and one that lists tools builds the classes of ``base`` and
``tools`` only, not those of prompts, resources or the method tables.  ``trimcp.schema``
re-exports everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar, overload

from attrs import AttrsInstance

from ._rules import SchemaError as SchemaError

if TYPE_CHECKING:
    import cattrs

    from ._converter import converter as converter
    from .base import Annotations as Annotations
    from .base import CacheableResult as CacheableResult
    from .base import CacheScope as CacheScope
    from .base import Cursor as Cursor
    from .base import EmptyResult as EmptyResult
    from .base import Icon as Icon
    from .base import NotificationParams as NotificationParams
    from .base import PaginatedRequestParams as PaginatedRequestParams
    from .base import PaginatedResult as PaginatedResult
    from .base import ProgressToken as ProgressToken
    from .base import RequestId as RequestId
    from .base import RequestParams as RequestParams
    from .base import Result as Result
    from .base import ResultType as ResultType
    from .base import Role as Role
    from .content import AudioContent as AudioContent
    from .content import BlobResourceContents as BlobResourceContents
    from .content import ContentBlock as ContentBlock
    from .content import EmbeddedResource as EmbeddedResource
    from .content import ImageContent as ImageContent
    from .content import ResourceContents as ResourceContents
    from .content import ResourceLink as ResourceLink
    from .content import SamplingContentBlock as SamplingContentBlock
    from .content import TextContent as TextContent
    from .content import TextResourceContents as TextResourceContents
    from .content import ToolResultContent as ToolResultContent
    from .content import ToolUseContent as ToolUseContent
    from .content import UnknownContent as UnknownContent
    from .elicitation import ElicitAction as ElicitAction
    from .elicitation import ElicitationCompleteNotificationParams as ElicitationCompleteNotificationParams
    from .elicitation import ElicitRequestFormParams as ElicitRequestFormParams
    from .elicitation import ElicitRequestParams as ElicitRequestParams
    from .elicitation import ElicitRequestURLParams as ElicitRequestURLParams
    from .elicitation import ElicitResult as ElicitResult
    from .elicitation import URLElicitationRequiredErrorData as URLElicitationRequiredErrorData
    from .lifecycle import ClientCapabilities as ClientCapabilities
    from .lifecycle import ElicitationCapability as ElicitationCapability
    from .lifecycle import Implementation as Implementation
    from .lifecycle import InitializeRequestParams as InitializeRequestParams
    from .lifecycle import InitializeResult as InitializeResult
    from .lifecycle import ListChangedCapability as ListChangedCapability
    from .lifecycle import PromptsCapability as PromptsCapability
    from .lifecycle import ResourcesCapability as ResourcesCapability
    from .lifecycle import RootsCapability as RootsCapability
    from .lifecycle import SamplingCapability as SamplingCapability
    from .lifecycle import ServerCapabilities as ServerCapabilities
    from .lifecycle import TasksCapability as TasksCapability
    from .lifecycle import ToolsCapability as ToolsCapability
    from .meta import CLIENT_CAPABILITIES_META as CLIENT_CAPABILITIES_META
    from .meta import CLIENT_INFO_META as CLIENT_INFO_META
    from .meta import LOG_LEVEL_META as LOG_LEVEL_META
    from .meta import PROTOCOL_VERSION_META as PROTOCOL_VERSION_META
    from .meta import SERVER_INFO_META as SERVER_INFO_META
    from .meta import SUBSCRIPTION_ID_META as SUBSCRIPTION_ID_META
    from .meta import Envelope as Envelope
    from .meta import envelope as envelope
    from .meta import server_info as server_info
    from .meta import subscription_id as subscription_id
    from .methods import CACHEABLE_METHODS as CACHEABLE_METHODS
    from .methods import HANDSHAKE_REVISIONS as HANDSHAKE_REVISIONS
    from .methods import MODERN_REVISION as MODERN_REVISION
    from .methods import NOTIFICATION_TYPES as NOTIFICATION_TYPES
    from .methods import PARAMS_REQUIRED as PARAMS_REQUIRED
    from .methods import REQUEST_TYPES as REQUEST_TYPES
    from .methods import REVISIONS as REVISIONS
    from .methods import TASK_AUGMENTABLE as TASK_AUGMENTABLE
    from .methods import notification_types as notification_types
    from .methods import params_required as params_required
    from .methods import parse_notification_params as parse_notification_params
    from .methods import parse_request_params as parse_request_params
    from .methods import parse_result as parse_result
    from .methods import request_types as request_types
    from .methods import result_class as result_class
    from .misc import LOGGING_LEVELS as LOGGING_LEVELS
    from .misc import CancelledNotificationParams as CancelledNotificationParams
    from .misc import ListRootsRequestParams as ListRootsRequestParams
    from .misc import ListRootsResult as ListRootsResult
    from .misc import LoggingLevel as LoggingLevel
    from .misc import LoggingMessageNotificationParams as LoggingMessageNotificationParams
    from .misc import ProgressNotificationParams as ProgressNotificationParams
    from .misc import Root as Root
    from .misc import SetLevelRequestParams as SetLevelRequestParams
    from .modern import ERROR_DATA_TYPES as ERROR_DATA_TYPES
    from .modern import DiscoverRequestParams as DiscoverRequestParams
    from .modern import DiscoverResult as DiscoverResult
    from .modern import Error as Error
    from .modern import MissingRequiredClientCapabilityErrorData as MissingRequiredClientCapabilityErrorData
    from .modern import SubscriptionFilter as SubscriptionFilter
    from .modern import SubscriptionsAcknowledgedNotificationParams as SubscriptionsAcknowledgedNotificationParams
    from .modern import SubscriptionsListenRequestParams as SubscriptionsListenRequestParams
    from .modern import SubscriptionsListenResult as SubscriptionsListenResult
    from .modern import UnsupportedProtocolVersionErrorData as UnsupportedProtocolVersionErrorData
    from .modern import parse_error_data as parse_error_data
    from .mrtr import INPUT_REQUEST_TYPES as INPUT_REQUEST_TYPES
    from .mrtr import MRTR_METHODS as MRTR_METHODS
    from .mrtr import CreateMessageInputRequest as CreateMessageInputRequest
    from .mrtr import ElicitInputRequest as ElicitInputRequest
    from .mrtr import InputRequest as InputRequest
    from .mrtr import InputRequests as InputRequests
    from .mrtr import InputRequiredResult as InputRequiredResult
    from .mrtr import InputResponse as InputResponse
    from .mrtr import InputResponses as InputResponses
    from .mrtr import ListRootsInputRequest as ListRootsInputRequest
    from .mrtr import UnknownInputResponse as UnknownInputResponse
    from .mrtr import input_response as input_response
    from .prompts import CompleteRequestParams as CompleteRequestParams
    from .prompts import CompleteResult as CompleteResult
    from .prompts import Completion as Completion
    from .prompts import CompletionArgument as CompletionArgument
    from .prompts import CompletionContext as CompletionContext
    from .prompts import CompletionReference as CompletionReference
    from .prompts import GetPromptRequestParams as GetPromptRequestParams
    from .prompts import GetPromptResult as GetPromptResult
    from .prompts import ListPromptsRequestParams as ListPromptsRequestParams
    from .prompts import ListPromptsResult as ListPromptsResult
    from .prompts import Prompt as Prompt
    from .prompts import PromptArgument as PromptArgument
    from .prompts import PromptMessage as PromptMessage
    from .prompts import PromptReference as PromptReference
    from .prompts import ResourceTemplateReference as ResourceTemplateReference
    from .resources import ListResourcesRequestParams as ListResourcesRequestParams
    from .resources import ListResourcesResult as ListResourcesResult
    from .resources import ListResourceTemplatesRequestParams as ListResourceTemplatesRequestParams
    from .resources import ListResourceTemplatesResult as ListResourceTemplatesResult
    from .resources import ReadResourceRequestParams as ReadResourceRequestParams
    from .resources import ReadResourceResult as ReadResourceResult
    from .resources import Resource as Resource
    from .resources import ResourceTemplate as ResourceTemplate
    from .resources import ResourceUpdatedNotificationParams as ResourceUpdatedNotificationParams
    from .resources import SubscribeRequestParams as SubscribeRequestParams
    from .resources import UnsubscribeRequestParams as UnsubscribeRequestParams
    from .sampling import CreateMessageRequestParams as CreateMessageRequestParams
    from .sampling import CreateMessageResult as CreateMessageResult
    from .sampling import IncludeContext as IncludeContext
    from .sampling import ModelHint as ModelHint
    from .sampling import ModelPreferences as ModelPreferences
    from .sampling import SamplingContent as SamplingContent
    from .sampling import SamplingMessage as SamplingMessage
    from .sampling import ToolChoice as ToolChoice
    from .tasks import RELATED_TASK_META_KEY as RELATED_TASK_META_KEY
    from .tasks import CancelTaskRequestParams as CancelTaskRequestParams
    from .tasks import CancelTaskResult as CancelTaskResult
    from .tasks import CreateTaskResult as CreateTaskResult
    from .tasks import GetTaskPayloadRequestParams as GetTaskPayloadRequestParams
    from .tasks import GetTaskPayloadResult as GetTaskPayloadResult
    from .tasks import GetTaskRequestParams as GetTaskRequestParams
    from .tasks import GetTaskResult as GetTaskResult
    from .tasks import ListTasksRequestParams as ListTasksRequestParams
    from .tasks import ListTasksResult as ListTasksResult
    from .tasks import RelatedTaskMetadata as RelatedTaskMetadata
    from .tasks import Task as Task
    from .tasks import TaskMetadata as TaskMetadata
    from .tasks import TaskStatus as TaskStatus
    from .tasks import TaskStatusNotificationParams as TaskStatusNotificationParams
    from .tool_calls import CallToolRequestParams as CallToolRequestParams
    from .tool_calls import CallToolResult as CallToolResult
    from .tools import X_MCP_HEADER as X_MCP_HEADER
    from .tools import ListToolsRequestParams as ListToolsRequestParams
    from .tools import ListToolsResult as ListToolsResult
    from .tools import Tool as Tool
    from .tools import ToolAnnotations as ToolAnnotations
    from .tools import ToolExecution as ToolExecution

#: Lazy export -> the submodule defining it: a client that lists tools never builds the classes of
#: prompts, resources or the method tables (PEP 562; ``__getattr__`` below caches each on first use).
_LAZY: dict[str, str] = {
    "converter": "._converter",
    "Annotations": ".base",
    "CacheableResult": ".base",
    "CacheScope": ".base",
    "Cursor": ".base",
    "EmptyResult": ".base",
    "Icon": ".base",
    "NotificationParams": ".base",
    "PaginatedRequestParams": ".base",
    "PaginatedResult": ".base",
    "ProgressToken": ".base",
    "RequestId": ".base",
    "RequestParams": ".base",
    "Result": ".base",
    "ResultType": ".base",
    "Role": ".base",
    "AudioContent": ".content",
    "BlobResourceContents": ".content",
    "ContentBlock": ".content",
    "EmbeddedResource": ".content",
    "ImageContent": ".content",
    "ResourceContents": ".content",
    "ResourceLink": ".content",
    "SamplingContentBlock": ".content",
    "TextContent": ".content",
    "TextResourceContents": ".content",
    "ToolResultContent": ".content",
    "ToolUseContent": ".content",
    "UnknownContent": ".content",
    "ElicitAction": ".elicitation",
    "ElicitationCompleteNotificationParams": ".elicitation",
    "ElicitRequestFormParams": ".elicitation",
    "ElicitRequestParams": ".elicitation",
    "ElicitRequestURLParams": ".elicitation",
    "ElicitResult": ".elicitation",
    "URLElicitationRequiredErrorData": ".elicitation",
    "ClientCapabilities": ".lifecycle",
    "ElicitationCapability": ".lifecycle",
    "Implementation": ".lifecycle",
    "InitializeRequestParams": ".lifecycle",
    "InitializeResult": ".lifecycle",
    "ListChangedCapability": ".lifecycle",
    "PromptsCapability": ".lifecycle",
    "ResourcesCapability": ".lifecycle",
    "RootsCapability": ".lifecycle",
    "SamplingCapability": ".lifecycle",
    "ServerCapabilities": ".lifecycle",
    "TasksCapability": ".lifecycle",
    "ToolsCapability": ".lifecycle",
    "CLIENT_CAPABILITIES_META": ".meta",
    "CLIENT_INFO_META": ".meta",
    "LOG_LEVEL_META": ".meta",
    "PROTOCOL_VERSION_META": ".meta",
    "SERVER_INFO_META": ".meta",
    "SUBSCRIPTION_ID_META": ".meta",
    "Envelope": ".meta",
    "envelope": ".meta",
    "server_info": ".meta",
    "subscription_id": ".meta",
    "CACHEABLE_METHODS": ".methods",
    "HANDSHAKE_REVISIONS": ".methods",
    "MODERN_REVISION": ".methods",
    "NOTIFICATION_TYPES": ".methods",
    "PARAMS_REQUIRED": ".methods",
    "REQUEST_TYPES": ".methods",
    "REVISIONS": ".methods",
    "TASK_AUGMENTABLE": ".methods",
    "notification_types": ".methods",
    "params_required": ".methods",
    "parse_notification_params": ".methods",
    "parse_request_params": ".methods",
    "parse_result": ".methods",
    "request_types": ".methods",
    "result_class": ".methods",
    "LOGGING_LEVELS": ".misc",
    "CancelledNotificationParams": ".misc",
    "ListRootsRequestParams": ".misc",
    "ListRootsResult": ".misc",
    "LoggingLevel": ".misc",
    "LoggingMessageNotificationParams": ".misc",
    "ProgressNotificationParams": ".misc",
    "Root": ".misc",
    "SetLevelRequestParams": ".misc",
    "ERROR_DATA_TYPES": ".modern",
    "DiscoverRequestParams": ".modern",
    "DiscoverResult": ".modern",
    "Error": ".modern",
    "MissingRequiredClientCapabilityErrorData": ".modern",
    "SubscriptionFilter": ".modern",
    "SubscriptionsAcknowledgedNotificationParams": ".modern",
    "SubscriptionsListenRequestParams": ".modern",
    "SubscriptionsListenResult": ".modern",
    "UnsupportedProtocolVersionErrorData": ".modern",
    "parse_error_data": ".modern",
    "INPUT_REQUEST_TYPES": ".mrtr",
    "MRTR_METHODS": ".mrtr",
    "CreateMessageInputRequest": ".mrtr",
    "ElicitInputRequest": ".mrtr",
    "InputRequest": ".mrtr",
    "InputRequests": ".mrtr",
    "InputRequiredResult": ".mrtr",
    "InputResponse": ".mrtr",
    "InputResponses": ".mrtr",
    "ListRootsInputRequest": ".mrtr",
    "UnknownInputResponse": ".mrtr",
    "input_response": ".mrtr",
    "CompleteRequestParams": ".prompts",
    "CompleteResult": ".prompts",
    "Completion": ".prompts",
    "CompletionArgument": ".prompts",
    "CompletionContext": ".prompts",
    "CompletionReference": ".prompts",
    "GetPromptRequestParams": ".prompts",
    "GetPromptResult": ".prompts",
    "ListPromptsRequestParams": ".prompts",
    "ListPromptsResult": ".prompts",
    "Prompt": ".prompts",
    "PromptArgument": ".prompts",
    "PromptMessage": ".prompts",
    "PromptReference": ".prompts",
    "ResourceTemplateReference": ".prompts",
    "ListResourcesRequestParams": ".resources",
    "ListResourcesResult": ".resources",
    "ListResourceTemplatesRequestParams": ".resources",
    "ListResourceTemplatesResult": ".resources",
    "ReadResourceRequestParams": ".resources",
    "ReadResourceResult": ".resources",
    "Resource": ".resources",
    "ResourceTemplate": ".resources",
    "ResourceUpdatedNotificationParams": ".resources",
    "SubscribeRequestParams": ".resources",
    "UnsubscribeRequestParams": ".resources",
    "CreateMessageRequestParams": ".sampling",
    "CreateMessageResult": ".sampling",
    "IncludeContext": ".sampling",
    "ModelHint": ".sampling",
    "ModelPreferences": ".sampling",
    "SamplingContent": ".sampling",
    "SamplingMessage": ".sampling",
    "ToolChoice": ".sampling",
    "RELATED_TASK_META_KEY": ".tasks",
    "CancelTaskRequestParams": ".tasks",
    "CancelTaskResult": ".tasks",
    "CreateTaskResult": ".tasks",
    "GetTaskPayloadRequestParams": ".tasks",
    "GetTaskPayloadResult": ".tasks",
    "GetTaskRequestParams": ".tasks",
    "GetTaskResult": ".tasks",
    "ListTasksRequestParams": ".tasks",
    "ListTasksResult": ".tasks",
    "RelatedTaskMetadata": ".tasks",
    "Task": ".tasks",
    "TaskMetadata": ".tasks",
    "TaskStatus": ".tasks",
    "TaskStatusNotificationParams": ".tasks",
    "CallToolRequestParams": ".tool_calls",
    "CallToolResult": ".tool_calls",
    "X_MCP_HEADER": ".tools",
    "ListToolsRequestParams": ".tools",
    "ListToolsResult": ".tools",
    "Tool": ".tools",
    "ToolAnnotations": ".tools",
    "ToolExecution": ".tools",
}

T = TypeVar("T")

#: The converter once ``from_wire`` or ``to_wire`` has first needed it (importing cattrs then).
#: Not named ``_converter``: importing that submodule sets the package attribute of its name.
_loaded: cattrs.Converter | None = None


def _load_converter() -> cattrs.Converter:
    global _loaded
    _loaded = import_module("._converter", __name__).converter
    return _loaded


@overload
def from_wire(cls: type[T], data: object) -> T: ...
@overload
def from_wire(cls: Any, data: object) -> Any: ...
def from_wire(cls: Any, data: object) -> Any:
    """Build a ``cls`` (an attrs class of this package, or a union alias such as
    ``ContentBlock``) from a decoded JSON value.

    Raises ``SchemaError`` (a ``ValueError``) naming the JSON path of the first
    problem.  Unknown members are kept in ``extra``; dicts and lists of
    primitives are shared with ``data``, not copied.
    """
    return (_loaded or _load_converter()).get_structure_hook(cls)(data, cls)


def to_wire(obj: AttrsInstance | Mapping[str, AttrsInstance]) -> dict[str, Any]:
    """The wire form (camelCase, ``None`` members left out, ``extra`` merged back) of ``obj``.

    ``obj`` may also be a map of objects (``InputRequests``, ``InputResponses``).
    """
    conv = _loaded or _load_converter()
    if isinstance(obj, Mapping):
        return {key: conv.unstructure(value) for key, value in obj.items()}
    out: dict[str, Any] = conv.unstructure(obj)
    return out


def __getattr__(name: str) -> Any:
    """Import a lazy export's submodule on first use and cache the name here (PEP 562)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "CACHEABLE_METHODS",
    "CLIENT_CAPABILITIES_META",
    "CLIENT_INFO_META",
    "ERROR_DATA_TYPES",
    "HANDSHAKE_REVISIONS",
    "INPUT_REQUEST_TYPES",
    "LOGGING_LEVELS",
    "LOG_LEVEL_META",
    "MODERN_REVISION",
    "MRTR_METHODS",
    "NOTIFICATION_TYPES",
    "PARAMS_REQUIRED",
    "PROTOCOL_VERSION_META",
    "RELATED_TASK_META_KEY",
    "REQUEST_TYPES",
    "REVISIONS",
    "SERVER_INFO_META",
    "SUBSCRIPTION_ID_META",
    "TASK_AUGMENTABLE",
    "X_MCP_HEADER",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CacheScope",
    "CacheableResult",
    "CallToolRequestParams",
    "CallToolResult",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "ContentBlock",
    "CreateMessageInputRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "CreateTaskResult",
    "Cursor",
    "DiscoverRequestParams",
    "DiscoverResult",
    "ElicitAction",
    "ElicitInputRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCapability",
    "ElicitationCompleteNotificationParams",
    "EmbeddedResource",
    "EmptyResult",
    "Envelope",
    "Error",
    "GetPromptRequestParams",
    "GetPromptResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequestParams",
    "GetTaskResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "IncludeContext",
    "InitializeRequestParams",
    "InitializeResult",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponses",
    "ListChangedCapability",
    "ListPromptsRequestParams",
    "ListPromptsResult",
    "ListResourceTemplatesRequestParams",
    "ListResourceTemplatesResult",
    "ListResourcesRequestParams",
    "ListResourcesResult",
    "ListRootsInputRequest",
    "ListRootsRequestParams",
    "ListRootsResult",
    "ListTasksRequestParams",
    "ListTasksResult",
    "ListToolsRequestParams",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "MissingRequiredClientCapabilityErrorData",
    "ModelHint",
    "ModelPreferences",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "PromptsCapability",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "RelatedTaskMetadata",
    "RequestId",
    "RequestParams",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotificationParams",
    "ResourcesCapability",
    "Result",
    "ResultType",
    "Role",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "SamplingContent",
    "SamplingContentBlock",
    "SamplingMessage",
    "SchemaError",
    "ServerCapabilities",
    "SetLevelRequestParams",
    "SubscribeRequestParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
    "TasksCapability",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolExecution",
    "ToolResultContent",
    "ToolUseContent",
    "ToolsCapability",
    "URLElicitationRequiredErrorData",
    "UnknownContent",
    "UnknownInputResponse",
    "UnsubscribeRequestParams",
    "UnsupportedProtocolVersionErrorData",
    "envelope",
    "from_wire",
    "input_response",
    "notification_types",
    "params_required",
    "parse_error_data",
    "parse_notification_params",
    "parse_request_params",
    "parse_result",
    "request_types",
    "result_class",
    "server_info",
    "subscription_id",
    "to_wire",
]
