from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ShardRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SHARD_RULE_UNSPECIFIED: _ClassVar[ShardRule]
    SHARD_RULE_UNEVEN: _ClassVar[ShardRule]
    SHARD_RULE_PAD: _ClassVar[ShardRule]
    SHARD_RULE_DROP: _ClassVar[ShardRule]

class ShuffleMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SHUFFLE_MODE_UNSPECIFIED: _ClassVar[ShuffleMode]
    SHUFFLE_MODE_UNIFORM: _ClassVar[ShuffleMode]
    SHUFFLE_MODE_NONE: _ClassVar[ShuffleMode]

class Ordering(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORDERING_UNSPECIFIED: _ClassVar[Ordering]
    ORDERING_OUT_OF_ORDER: _ClassVar[Ordering]
    ORDERING_IN_ORDER: _ClassVar[Ordering]

class MissingSamplePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MISSING_SAMPLE_POLICY_UNSPECIFIED: _ClassVar[MissingSamplePolicy]
    MISSING_SAMPLE_POLICY_FAIL: _ClassVar[MissingSamplePolicy]
    MISSING_SAMPLE_POLICY_SKIP: _ClassVar[MissingSamplePolicy]

class Interpolation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INTERPOLATION_UNSPECIFIED: _ClassVar[Interpolation]
    INTERPOLATION_BILINEAR: _ClassVar[Interpolation]
    INTERPOLATION_BICUBIC: _ClassVar[Interpolation]
    INTERPOLATION_LANCZOS3: _ClassVar[Interpolation]
    INTERPOLATION_NEAREST: _ClassVar[Interpolation]

class TransformOutput(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRANSFORM_OUTPUT_UNSPECIFIED: _ClassVar[TransformOutput]
    TRANSFORM_OUTPUT_RAW: _ClassVar[TransformOutput]
    TRANSFORM_OUTPUT_JPEG: _ClassVar[TransformOutput]
    TRANSFORM_OUTPUT_WEBP: _ClassVar[TransformOutput]

class BadImagePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BAD_IMAGE_POLICY_UNSPECIFIED: _ClassVar[BadImagePolicy]
    BAD_IMAGE_POLICY_FAIL: _ClassVar[BadImagePolicy]
    BAD_IMAGE_POLICY_SKIP: _ClassVar[BadImagePolicy]

class DType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    D_TYPE_UNSPECIFIED: _ClassVar[DType]
    D_TYPE_UINT8: _ClassVar[DType]

class ColumnType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLUMN_TYPE_UNSPECIFIED: _ClassVar[ColumnType]
    COLUMN_TYPE_TEXT: _ClassVar[ColumnType]
    COLUMN_TYPE_INT: _ClassVar[ColumnType]
    COLUMN_TYPE_BIGINT: _ClassVar[ColumnType]
    COLUMN_TYPE_DOUBLE: _ClassVar[ColumnType]
    COLUMN_TYPE_BOOLEAN: _ClassVar[ColumnType]

class ClassTargetMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLASS_TARGET_MODE_UNSPECIFIED: _ClassVar[ClassTargetMode]
    CLASS_TARGET_MODE_NATURAL: _ClassVar[ClassTargetMode]
    CLASS_TARGET_MODE_BALANCED: _ClassVar[ClassTargetMode]
    CLASS_TARGET_MODE_RATIOS: _ClassVar[ClassTargetMode]

class BadSamplePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BAD_SAMPLE_POLICY_UNSPECIFIED: _ClassVar[BadSamplePolicy]
    BAD_SAMPLE_POLICY_FAIL: _ClassVar[BadSamplePolicy]
    BAD_SAMPLE_POLICY_SKIP: _ClassVar[BadSamplePolicy]
SHARD_RULE_UNSPECIFIED: ShardRule
SHARD_RULE_UNEVEN: ShardRule
SHARD_RULE_PAD: ShardRule
SHARD_RULE_DROP: ShardRule
SHUFFLE_MODE_UNSPECIFIED: ShuffleMode
SHUFFLE_MODE_UNIFORM: ShuffleMode
SHUFFLE_MODE_NONE: ShuffleMode
ORDERING_UNSPECIFIED: Ordering
ORDERING_OUT_OF_ORDER: Ordering
ORDERING_IN_ORDER: Ordering
MISSING_SAMPLE_POLICY_UNSPECIFIED: MissingSamplePolicy
MISSING_SAMPLE_POLICY_FAIL: MissingSamplePolicy
MISSING_SAMPLE_POLICY_SKIP: MissingSamplePolicy
INTERPOLATION_UNSPECIFIED: Interpolation
INTERPOLATION_BILINEAR: Interpolation
INTERPOLATION_BICUBIC: Interpolation
INTERPOLATION_LANCZOS3: Interpolation
INTERPOLATION_NEAREST: Interpolation
TRANSFORM_OUTPUT_UNSPECIFIED: TransformOutput
TRANSFORM_OUTPUT_RAW: TransformOutput
TRANSFORM_OUTPUT_JPEG: TransformOutput
TRANSFORM_OUTPUT_WEBP: TransformOutput
BAD_IMAGE_POLICY_UNSPECIFIED: BadImagePolicy
BAD_IMAGE_POLICY_FAIL: BadImagePolicy
BAD_IMAGE_POLICY_SKIP: BadImagePolicy
D_TYPE_UNSPECIFIED: DType
D_TYPE_UINT8: DType
COLUMN_TYPE_UNSPECIFIED: ColumnType
COLUMN_TYPE_TEXT: ColumnType
COLUMN_TYPE_INT: ColumnType
COLUMN_TYPE_BIGINT: ColumnType
COLUMN_TYPE_DOUBLE: ColumnType
COLUMN_TYPE_BOOLEAN: ColumnType
CLASS_TARGET_MODE_UNSPECIFIED: ClassTargetMode
CLASS_TARGET_MODE_NATURAL: ClassTargetMode
CLASS_TARGET_MODE_BALANCED: ClassTargetMode
CLASS_TARGET_MODE_RATIOS: ClassTargetMode
BAD_SAMPLE_POLICY_UNSPECIFIED: BadSamplePolicy
BAD_SAMPLE_POLICY_FAIL: BadSamplePolicy
BAD_SAMPLE_POLICY_SKIP: BadSamplePolicy

class StreamBatchesRequest(_message.Message):
    __slots__ = ("dataset", "split", "batch_size", "seed", "first_epoch", "epochs", "rank", "world_size", "shard_rule", "shuffle", "drop_last", "ordering", "prefetch", "missing_sample_policy", "resume_token", "transform", "job_checkpoint", "sources", "samples_per_epoch", "columns", "job_id", "skip_batches", "replay")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    FIRST_EPOCH_FIELD_NUMBER: _ClassVar[int]
    EPOCHS_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    SHARD_RULE_FIELD_NUMBER: _ClassVar[int]
    SHUFFLE_FIELD_NUMBER: _ClassVar[int]
    DROP_LAST_FIELD_NUMBER: _ClassVar[int]
    ORDERING_FIELD_NUMBER: _ClassVar[int]
    PREFETCH_FIELD_NUMBER: _ClassVar[int]
    MISSING_SAMPLE_POLICY_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TRANSFORM_FIELD_NUMBER: _ClassVar[int]
    JOB_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_PER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SKIP_BATCHES_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    split: str
    batch_size: int
    seed: int
    first_epoch: int
    epochs: int
    rank: int
    world_size: int
    shard_rule: ShardRule
    shuffle: ShuffleMode
    drop_last: bool
    ordering: Ordering
    prefetch: int
    missing_sample_policy: MissingSamplePolicy
    resume_token: bytes
    transform: Transform
    job_checkpoint: bytes
    sources: _containers.RepeatedCompositeFieldContainer[StreamSource]
    samples_per_epoch: int
    columns: _containers.RepeatedScalarFieldContainer[str]
    job_id: str
    skip_batches: LedgerSkip
    replay: LedgerReplay
    def __init__(self, dataset: _Optional[str] = ..., split: _Optional[str] = ..., batch_size: _Optional[int] = ..., seed: _Optional[int] = ..., first_epoch: _Optional[int] = ..., epochs: _Optional[int] = ..., rank: _Optional[int] = ..., world_size: _Optional[int] = ..., shard_rule: _Optional[_Union[ShardRule, str]] = ..., shuffle: _Optional[_Union[ShuffleMode, str]] = ..., drop_last: bool = ..., ordering: _Optional[_Union[Ordering, str]] = ..., prefetch: _Optional[int] = ..., missing_sample_policy: _Optional[_Union[MissingSamplePolicy, str]] = ..., resume_token: _Optional[bytes] = ..., transform: _Optional[_Union[Transform, _Mapping]] = ..., job_checkpoint: _Optional[bytes] = ..., sources: _Optional[_Iterable[_Union[StreamSource, _Mapping]]] = ..., samples_per_epoch: _Optional[int] = ..., columns: _Optional[_Iterable[str]] = ..., job_id: _Optional[str] = ..., skip_batches: _Optional[_Union[LedgerSkip, _Mapping]] = ..., replay: _Optional[_Union[LedgerReplay, _Mapping]] = ...) -> None: ...

class LedgerSkip(_message.Message):
    __slots__ = ("first_batch", "last_batch")
    FIRST_BATCH_FIELD_NUMBER: _ClassVar[int]
    LAST_BATCH_FIELD_NUMBER: _ClassVar[int]
    first_batch: int
    last_batch: int
    def __init__(self, first_batch: _Optional[int] = ..., last_batch: _Optional[int] = ...) -> None: ...

class LedgerReplay(_message.Message):
    __slots__ = ("epoch", "rank", "first_batch", "last_batch", "world_size")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FIRST_BATCH_FIELD_NUMBER: _ClassVar[int]
    LAST_BATCH_FIELD_NUMBER: _ClassVar[int]
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    rank: int
    first_batch: int
    last_batch: int
    world_size: int
    def __init__(self, epoch: _Optional[int] = ..., rank: _Optional[int] = ..., first_batch: _Optional[int] = ..., last_batch: _Optional[int] = ..., world_size: _Optional[int] = ...) -> None: ...

class StreamSource(_message.Message):
    __slots__ = ("dataset", "split", "weight", "repeat")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    split: str
    weight: float
    repeat: bool
    def __init__(self, dataset: _Optional[str] = ..., split: _Optional[str] = ..., weight: _Optional[float] = ..., repeat: bool = ...) -> None: ...

class JobCheckpoint(_message.Message):
    __slots__ = ("world_size", "ranks", "base")
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    BASE_FIELD_NUMBER: _ClassVar[int]
    world_size: int
    ranks: _containers.RepeatedCompositeFieldContainer[JobCheckpointRank]
    base: bytes
    def __init__(self, world_size: _Optional[int] = ..., ranks: _Optional[_Iterable[_Union[JobCheckpointRank, _Mapping]]] = ..., base: _Optional[bytes] = ...) -> None: ...

class JobCheckpointRank(_message.Message):
    __slots__ = ("rank", "epoch", "resume_token")
    RANK_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    rank: int
    epoch: int
    resume_token: bytes
    def __init__(self, rank: _Optional[int] = ..., epoch: _Optional[int] = ..., resume_token: _Optional[bytes] = ...) -> None: ...

class CenterCrop(_message.Message):
    __slots__ = ("height", "width")
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    height: int
    width: int
    def __init__(self, height: _Optional[int] = ..., width: _Optional[int] = ...) -> None: ...

class RandomResizedCrop(_message.Message):
    __slots__ = ("height", "width", "scale_min", "scale_max", "ratio_min", "ratio_max")
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    SCALE_MIN_FIELD_NUMBER: _ClassVar[int]
    SCALE_MAX_FIELD_NUMBER: _ClassVar[int]
    RATIO_MIN_FIELD_NUMBER: _ClassVar[int]
    RATIO_MAX_FIELD_NUMBER: _ClassVar[int]
    height: int
    width: int
    scale_min: float
    scale_max: float
    ratio_min: float
    ratio_max: float
    def __init__(self, height: _Optional[int] = ..., width: _Optional[int] = ..., scale_min: _Optional[float] = ..., scale_max: _Optional[float] = ..., ratio_min: _Optional[float] = ..., ratio_max: _Optional[float] = ...) -> None: ...

class Transform(_message.Message):
    __slots__ = ("channels", "resize", "center_crop", "random_resized_crop", "horizontal_flip", "interpolation", "output", "quality", "bad_image_policy", "masks")
    CHANNELS_FIELD_NUMBER: _ClassVar[int]
    RESIZE_FIELD_NUMBER: _ClassVar[int]
    CENTER_CROP_FIELD_NUMBER: _ClassVar[int]
    RANDOM_RESIZED_CROP_FIELD_NUMBER: _ClassVar[int]
    HORIZONTAL_FLIP_FIELD_NUMBER: _ClassVar[int]
    INTERPOLATION_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    QUALITY_FIELD_NUMBER: _ClassVar[int]
    BAD_IMAGE_POLICY_FIELD_NUMBER: _ClassVar[int]
    MASKS_FIELD_NUMBER: _ClassVar[int]
    channels: int
    resize: int
    center_crop: CenterCrop
    random_resized_crop: RandomResizedCrop
    horizontal_flip: float
    interpolation: Interpolation
    output: TransformOutput
    quality: int
    bad_image_policy: BadImagePolicy
    masks: bool
    def __init__(self, channels: _Optional[int] = ..., resize: _Optional[int] = ..., center_crop: _Optional[_Union[CenterCrop, _Mapping]] = ..., random_resized_crop: _Optional[_Union[RandomResizedCrop, _Mapping]] = ..., horizontal_flip: _Optional[float] = ..., interpolation: _Optional[_Union[Interpolation, str]] = ..., output: _Optional[_Union[TransformOutput, str]] = ..., quality: _Optional[int] = ..., bad_image_policy: _Optional[_Union[BadImagePolicy, str]] = ..., masks: bool = ...) -> None: ...

class Batch(_message.Message):
    __slots__ = ("epoch", "index", "ids", "labels", "data", "data_sizes", "label_blobs", "label_blob_sizes", "resume_token", "skipped_missing", "last_in_epoch", "shape", "dtype", "skipped_undecodable", "source_indexes", "masks", "mask_shape", "columns")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DATA_SIZES_FIELD_NUMBER: _ClassVar[int]
    LABEL_BLOBS_FIELD_NUMBER: _ClassVar[int]
    LABEL_BLOB_SIZES_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_MISSING_FIELD_NUMBER: _ClassVar[int]
    LAST_IN_EPOCH_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_UNDECODABLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_INDEXES_FIELD_NUMBER: _ClassVar[int]
    MASKS_FIELD_NUMBER: _ClassVar[int]
    MASK_SHAPE_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    index: int
    ids: bytes
    labels: _containers.RepeatedScalarFieldContainer[int]
    data: bytes
    data_sizes: _containers.RepeatedScalarFieldContainer[int]
    label_blobs: bytes
    label_blob_sizes: _containers.RepeatedScalarFieldContainer[int]
    resume_token: bytes
    skipped_missing: int
    last_in_epoch: bool
    shape: _containers.RepeatedScalarFieldContainer[int]
    dtype: DType
    skipped_undecodable: int
    source_indexes: _containers.RepeatedScalarFieldContainer[int]
    masks: bytes
    mask_shape: _containers.RepeatedScalarFieldContainer[int]
    columns: _containers.RepeatedCompositeFieldContainer[Column]
    def __init__(self, epoch: _Optional[int] = ..., index: _Optional[int] = ..., ids: _Optional[bytes] = ..., labels: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ..., data_sizes: _Optional[_Iterable[int]] = ..., label_blobs: _Optional[bytes] = ..., label_blob_sizes: _Optional[_Iterable[int]] = ..., resume_token: _Optional[bytes] = ..., skipped_missing: _Optional[int] = ..., last_in_epoch: bool = ..., shape: _Optional[_Iterable[int]] = ..., dtype: _Optional[_Union[DType, str]] = ..., skipped_undecodable: _Optional[int] = ..., source_indexes: _Optional[_Iterable[int]] = ..., masks: _Optional[bytes] = ..., mask_shape: _Optional[_Iterable[int]] = ..., columns: _Optional[_Iterable[_Union[Column, _Mapping]]] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("name", "type", "text_values", "int_values", "bigint_values", "double_values", "boolean_values", "nulls")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_VALUES_FIELD_NUMBER: _ClassVar[int]
    INT_VALUES_FIELD_NUMBER: _ClassVar[int]
    BIGINT_VALUES_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUES_FIELD_NUMBER: _ClassVar[int]
    BOOLEAN_VALUES_FIELD_NUMBER: _ClassVar[int]
    NULLS_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ColumnType
    text_values: _containers.RepeatedScalarFieldContainer[str]
    int_values: _containers.RepeatedScalarFieldContainer[int]
    bigint_values: _containers.RepeatedScalarFieldContainer[int]
    double_values: _containers.RepeatedScalarFieldContainer[float]
    boolean_values: _containers.RepeatedScalarFieldContainer[bool]
    nulls: bytes
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ColumnType, str]] = ..., text_values: _Optional[_Iterable[str]] = ..., int_values: _Optional[_Iterable[int]] = ..., bigint_values: _Optional[_Iterable[int]] = ..., double_values: _Optional[_Iterable[float]] = ..., boolean_values: _Optional[_Iterable[bool]] = ..., nulls: _Optional[bytes] = ...) -> None: ...

class StreamBatchesResponse(_message.Message):
    __slots__ = ("batch",)
    BATCH_FIELD_NUMBER: _ClassVar[int]
    batch: Batch
    def __init__(self, batch: _Optional[_Union[Batch, _Mapping]] = ...) -> None: ...

class DescribeDatasetRequest(_message.Message):
    __slots__ = ("dataset",)
    DATASET_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    def __init__(self, dataset: _Optional[str] = ...) -> None: ...

class DescribeDatasetResponse(_message.Message):
    __slots__ = ("dataset", "sample_count", "total_bytes", "label_names", "class_counts", "columns", "splits")
    class ClassCountsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    class ColumnsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DATASET_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    LABEL_NAMES_FIELD_NUMBER: _ClassVar[int]
    CLASS_COUNTS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    SPLITS_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    sample_count: int
    total_bytes: int
    label_names: _containers.RepeatedScalarFieldContainer[str]
    class_counts: _containers.ScalarMap[int, int]
    columns: _containers.ScalarMap[str, str]
    splits: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, dataset: _Optional[str] = ..., sample_count: _Optional[int] = ..., total_bytes: _Optional[int] = ..., label_names: _Optional[_Iterable[str]] = ..., class_counts: _Optional[_Mapping[int, int]] = ..., columns: _Optional[_Mapping[str, str]] = ..., splits: _Optional[_Iterable[str]] = ...) -> None: ...

class PartWeight(_message.Message):
    __slots__ = ("name", "weight")
    NAME_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    name: str
    weight: float
    def __init__(self, name: _Optional[str] = ..., weight: _Optional[float] = ...) -> None: ...

class StringList(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class NumericRange(_message.Message):
    __slots__ = ("min", "max")
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    min: float
    max: float
    def __init__(self, min: _Optional[float] = ..., max: _Optional[float] = ...) -> None: ...

class MetadataFilter(_message.Message):
    __slots__ = ("column", "equals", "range")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    EQUALS_FIELD_NUMBER: _ClassVar[int]
    IN_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    column: str
    equals: str
    range: NumericRange
    def __init__(self, column: _Optional[str] = ..., equals: _Optional[str] = ..., range: _Optional[_Union[NumericRange, _Mapping]] = ..., **kwargs) -> None: ...

class CreateSplitsRequest(_message.Message):
    __slots__ = ("dataset", "name", "parts", "folds", "group_by", "class_target_mode", "class_ratios", "max_total", "filters", "seed", "new_version", "allow_shortfall")
    class ClassRatiosEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: float
        def __init__(self, key: _Optional[int] = ..., value: _Optional[float] = ...) -> None: ...
    DATASET_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    FOLDS_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    CLASS_TARGET_MODE_FIELD_NUMBER: _ClassVar[int]
    CLASS_RATIOS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    ALLOW_SHORTFALL_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    name: str
    parts: _containers.RepeatedCompositeFieldContainer[PartWeight]
    folds: int
    group_by: _containers.RepeatedScalarFieldContainer[str]
    class_target_mode: ClassTargetMode
    class_ratios: _containers.ScalarMap[int, float]
    max_total: int
    filters: _containers.RepeatedCompositeFieldContainer[MetadataFilter]
    seed: int
    new_version: bool
    allow_shortfall: bool
    def __init__(self, dataset: _Optional[str] = ..., name: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[PartWeight, _Mapping]]] = ..., folds: _Optional[int] = ..., group_by: _Optional[_Iterable[str]] = ..., class_target_mode: _Optional[_Union[ClassTargetMode, str]] = ..., class_ratios: _Optional[_Mapping[int, float]] = ..., max_total: _Optional[int] = ..., filters: _Optional[_Iterable[_Union[MetadataFilter, _Mapping]]] = ..., seed: _Optional[int] = ..., new_version: bool = ..., allow_shortfall: bool = ...) -> None: ...

class SplitPart(_message.Message):
    __slots__ = ("name", "size", "class_counts", "targets", "groups")
    class ClassCountsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    class TargetsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    CLASS_COUNTS_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    name: str
    size: int
    class_counts: _containers.ScalarMap[int, int]
    targets: _containers.ScalarMap[int, int]
    groups: int
    def __init__(self, name: _Optional[str] = ..., size: _Optional[int] = ..., class_counts: _Optional[_Mapping[int, int]] = ..., targets: _Optional[_Mapping[int, int]] = ..., groups: _Optional[int] = ...) -> None: ...

class SplitSet(_message.Message):
    __slots__ = ("name", "version", "params_json", "seed", "folds", "parts", "content_hash", "worst_deviation", "created_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PARAMS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    FOLDS_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    WORST_DEVIATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    params_json: str
    seed: int
    folds: int
    parts: _containers.RepeatedCompositeFieldContainer[SplitPart]
    content_hash: str
    worst_deviation: float
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., params_json: _Optional[str] = ..., seed: _Optional[int] = ..., folds: _Optional[int] = ..., parts: _Optional[_Iterable[_Union[SplitPart, _Mapping]]] = ..., content_hash: _Optional[str] = ..., worst_deviation: _Optional[float] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateSplitsResponse(_message.Message):
    __slots__ = ("split_set",)
    SPLIT_SET_FIELD_NUMBER: _ClassVar[int]
    split_set: SplitSet
    def __init__(self, split_set: _Optional[_Union[SplitSet, _Mapping]] = ...) -> None: ...

class ListSplitsRequest(_message.Message):
    __slots__ = ("dataset",)
    DATASET_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    def __init__(self, dataset: _Optional[str] = ...) -> None: ...

class ListSplitsResponse(_message.Message):
    __slots__ = ("split_sets",)
    SPLIT_SETS_FIELD_NUMBER: _ClassVar[int]
    split_sets: _containers.RepeatedCompositeFieldContainer[SplitSet]
    def __init__(self, split_sets: _Optional[_Iterable[_Union[SplitSet, _Mapping]]] = ...) -> None: ...

class GetSplitRequest(_message.Message):
    __slots__ = ("dataset", "name", "version")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    name: str
    version: int
    def __init__(self, dataset: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetSplitResponse(_message.Message):
    __slots__ = ("split_set",)
    SPLIT_SET_FIELD_NUMBER: _ClassVar[int]
    split_set: SplitSet
    def __init__(self, split_set: _Optional[_Union[SplitSet, _Mapping]] = ...) -> None: ...

class IngestTarget(_message.Message):
    __slots__ = ("dataset", "label_names", "columns", "bad_sample_policy", "source")
    class ColumnsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DATASET_FIELD_NUMBER: _ClassVar[int]
    LABEL_NAMES_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    BAD_SAMPLE_POLICY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    label_names: _containers.RepeatedScalarFieldContainer[str]
    columns: _containers.ScalarMap[str, str]
    bad_sample_policy: BadSamplePolicy
    source: str
    def __init__(self, dataset: _Optional[str] = ..., label_names: _Optional[_Iterable[str]] = ..., columns: _Optional[_Mapping[str, str]] = ..., bad_sample_policy: _Optional[_Union[BadSamplePolicy, str]] = ..., source: _Optional[str] = ...) -> None: ...

class MetadataValue(_message.Message):
    __slots__ = ("text", "int", "double", "boolean")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INT_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_FIELD_NUMBER: _ClassVar[int]
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    text: str
    int: int
    double: float
    boolean: bool
    def __init__(self, text: _Optional[str] = ..., int: _Optional[int] = ..., double: _Optional[float] = ..., boolean: bool = ...) -> None: ...

class IngestSample(_message.Message):
    __slots__ = ("source_key", "data", "label", "label_blob", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: MetadataValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[MetadataValue, _Mapping]] = ...) -> None: ...
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    LABEL_BLOB_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    source_key: str
    data: bytes
    label: int
    label_blob: bytes
    metadata: _containers.MessageMap[str, MetadataValue]
    def __init__(self, source_key: _Optional[str] = ..., data: _Optional[bytes] = ..., label: _Optional[int] = ..., label_blob: _Optional[bytes] = ..., metadata: _Optional[_Mapping[str, MetadataValue]] = ...) -> None: ...

class IngestSamplesRequest(_message.Message):
    __slots__ = ("target", "samples")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    target: IngestTarget
    samples: _containers.RepeatedCompositeFieldContainer[IngestSample]
    def __init__(self, target: _Optional[_Union[IngestTarget, _Mapping]] = ..., samples: _Optional[_Iterable[_Union[IngestSample, _Mapping]]] = ...) -> None: ...

class SkippedSample(_message.Message):
    __slots__ = ("source_key", "reason")
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    source_key: str
    reason: str
    def __init__(self, source_key: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class IngestSamplesResponse(_message.Message):
    __slots__ = ("acknowledged_requests", "acknowledged_samples", "written", "already_present", "skipped", "skipped_samples", "done", "dataset_samples")
    ACKNOWLEDGED_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGED_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    ALREADY_PRESENT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    DATASET_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    acknowledged_requests: int
    acknowledged_samples: int
    written: int
    already_present: int
    skipped: int
    skipped_samples: _containers.RepeatedCompositeFieldContainer[SkippedSample]
    done: bool
    dataset_samples: int
    def __init__(self, acknowledged_requests: _Optional[int] = ..., acknowledged_samples: _Optional[int] = ..., written: _Optional[int] = ..., already_present: _Optional[int] = ..., skipped: _Optional[int] = ..., skipped_samples: _Optional[_Iterable[_Union[SkippedSample, _Mapping]]] = ..., done: bool = ..., dataset_samples: _Optional[int] = ...) -> None: ...

class GetLedgerRequest(_message.Message):
    __slots__ = ("job_id", "batches", "sample", "columns", "include_superseded")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    batches: LedgerBatchRange
    sample: LedgerSampleQuery
    columns: _containers.RepeatedScalarFieldContainer[str]
    include_superseded: bool
    def __init__(self, job_id: _Optional[str] = ..., batches: _Optional[_Union[LedgerBatchRange, _Mapping]] = ..., sample: _Optional[_Union[LedgerSampleQuery, _Mapping]] = ..., columns: _Optional[_Iterable[str]] = ..., include_superseded: bool = ...) -> None: ...

class LedgerBatchRange(_message.Message):
    __slots__ = ("epoch", "rank", "first_batch", "last_batch")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FIRST_BATCH_FIELD_NUMBER: _ClassVar[int]
    LAST_BATCH_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    rank: int
    first_batch: int
    last_batch: int
    def __init__(self, epoch: _Optional[int] = ..., rank: _Optional[int] = ..., first_batch: _Optional[int] = ..., last_batch: _Optional[int] = ...) -> None: ...

class LedgerSampleQuery(_message.Message):
    __slots__ = ("id", "source_key", "dataset")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    DATASET_FIELD_NUMBER: _ClassVar[int]
    id: bytes
    source_key: str
    dataset: str
    def __init__(self, id: _Optional[bytes] = ..., source_key: _Optional[str] = ..., dataset: _Optional[str] = ...) -> None: ...

class LedgerSource(_message.Message):
    __slots__ = ("dataset", "split")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    split: str
    def __init__(self, dataset: _Optional[str] = ..., split: _Optional[str] = ...) -> None: ...

class LedgerBatch(_message.Message):
    __slots__ = ("epoch", "rank", "world_size", "index", "ids", "source_indexes", "source_keys", "columns", "resume_token", "sent_at", "superseded", "resharded_from", "skipped")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_INDEXES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEYS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    RESHARDED_FROM_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    rank: int
    world_size: int
    index: int
    ids: bytes
    source_indexes: _containers.RepeatedScalarFieldContainer[int]
    source_keys: _containers.RepeatedScalarFieldContainer[str]
    columns: _containers.RepeatedCompositeFieldContainer[Column]
    resume_token: bytes
    sent_at: _timestamp_pb2.Timestamp
    superseded: bool
    resharded_from: str
    skipped: bool
    def __init__(self, epoch: _Optional[int] = ..., rank: _Optional[int] = ..., world_size: _Optional[int] = ..., index: _Optional[int] = ..., ids: _Optional[bytes] = ..., source_indexes: _Optional[_Iterable[int]] = ..., source_keys: _Optional[_Iterable[str]] = ..., columns: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., resume_token: _Optional[bytes] = ..., sent_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., superseded: bool = ..., resharded_from: _Optional[str] = ..., skipped: bool = ...) -> None: ...

class LedgerAppearance(_message.Message):
    __slots__ = ("epoch", "rank", "world_size", "batch_index", "position", "sent_at", "superseded", "resharded_from", "skipped")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    BATCH_INDEX_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    RESHARDED_FROM_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    rank: int
    world_size: int
    batch_index: int
    position: int
    sent_at: _timestamp_pb2.Timestamp
    superseded: bool
    resharded_from: str
    skipped: bool
    def __init__(self, epoch: _Optional[int] = ..., rank: _Optional[int] = ..., world_size: _Optional[int] = ..., batch_index: _Optional[int] = ..., position: _Optional[int] = ..., sent_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., superseded: bool = ..., resharded_from: _Optional[str] = ..., skipped: bool = ...) -> None: ...

class GetLedgerResponse(_message.Message):
    __slots__ = ("job_id", "sources", "batches", "sample_id", "appearances")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_ID_FIELD_NUMBER: _ClassVar[int]
    APPEARANCES_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    sources: _containers.RepeatedCompositeFieldContainer[LedgerSource]
    batches: _containers.RepeatedCompositeFieldContainer[LedgerBatch]
    sample_id: bytes
    appearances: _containers.RepeatedCompositeFieldContainer[LedgerAppearance]
    def __init__(self, job_id: _Optional[str] = ..., sources: _Optional[_Iterable[_Union[LedgerSource, _Mapping]]] = ..., batches: _Optional[_Iterable[_Union[LedgerBatch, _Mapping]]] = ..., sample_id: _Optional[bytes] = ..., appearances: _Optional[_Iterable[_Union[LedgerAppearance, _Mapping]]] = ...) -> None: ...
