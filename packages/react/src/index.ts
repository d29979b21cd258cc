export { HearthProvider, useHearth, useHearthContext, useMetadata, useProfile } from './provider/HearthProvider.js';
export type { HearthContextValue, HearthProviderProps, Navigate } from './provider/HearthProvider.js';
export { errorMessage, outcomeOf, useAsync, useResource, useSearch, type AsyncState } from './provider/hooks.js';
export * from './provider/metadata.js';
export { useAction, type ActionState } from './provider/use-action.js';
export { AttachmentInput, type AttachmentInputProps } from './AttachmentInput/AttachmentInput.js';
export { CodeableConceptInput, type CodeableConceptInputProps } from './CodeableConceptInput/CodeableConceptInput.js';
export { CodingInput, useValueSetSearch, type CodingInputProps } from './CodingInput/CodingInput.js';
export { expandValueSet } from './CodingInput/valueset.js';
export { DateTimeInput, fhirToLocal, localToFhir, type DateTimeInputProps } from './DateTimeInput/DateTimeInput.js';
export { DicomViewer, type DicomViewerProps } from './DicomViewer/DicomViewer.js';
export {
  initialWindow,
  readDicom,
  renderFrame,
  transferSyntaxName,
  type DicomImage,
  type DicomTags,
  type Window as DicomWindow,
} from './DicomViewer/dicom-image.js';
export { EncounterDiagnoses, type EncounterDiagnosesProps } from './EncounterDiagnoses/EncounterDiagnoses.js';
export { diagnosisTransaction, ENCOUNTER_DIAGNOSIS } from './EncounterDiagnoses/diagnosis.js';
export { EncounterNote, type EncounterNoteProps } from './EncounterNote/EncounterNote.js';
export {
  draftNote,
  isSigned,
  noteText,
  PROGRESS_NOTE,
  signNote,
  textToXhtml,
  xhtmlToText,
} from './EncounterNote/note.js';
export {
  ImagingStudyList,
  type ImagingInstanceTarget,
  type ImagingStudyListProps,
} from './ImagingStudyList/ImagingStudyList.js';
export {
  accessionNumber,
  IMAGING_INSTANCE_CONTENT,
  instanceBinary,
  sortedSeries,
  studyCounts,
  studyInstanceUid,
  studyModalities,
  type ImagingInstance,
  type ImagingSeries,
} from './ImagingStudyList/imaging.js';
export { JsonEditor, JsonView, type JsonEditorProps, type JsonViewProps } from './JsonEditor/JsonEditor.js';
export { NumericInput, parseNumeric, type NumericInputProps } from './NumericInput/NumericInput.js';
export { ObservationChart, groupByCode, type ObservationChartProps } from './ObservationChart/ObservationChart.js';
export {
  OperationOutcomeAlert,
  type OperationOutcomeAlertProps,
} from './OperationOutcomeAlert/OperationOutcomeAlert.js';
export { ageText, identifierText, PatientHeader, type PatientHeaderProps } from './PatientHeader/PatientHeader.js';
export { interpretPatientQuery, type PatientQuery } from './PatientSearch/patient-query.js';
export { PatientTimeline, type PatientTimelineProps } from './PatientTimeline/PatientTimeline.js';
export {
  countTimeline,
  entryDate,
  TimelinePager,
  type TimelineEntry,
  type TimelineFilter,
  type TimelineSource,
} from './PatientTimeline/timeline-pager.js';
export { QuestionnaireBuilder, type QuestionnaireBuilderProps } from './QuestionnaireBuilder/QuestionnaireBuilder.js';
export { QuestionnaireForm, type QuestionnaireFormProps } from './QuestionnaireForm/QuestionnaireForm.js';
export { buildResponse, collectAnswers, isEnabled } from './QuestionnaireForm/logic.js';
export { ReferenceInput, type ReferenceInputProps } from './ReferenceInput/ReferenceInput.js';
export {
  abnormalFlag,
  describeResource,
  observationValue,
  type ResourceDescription,
} from './ResourceDescription/describe.js';
export { ResourceAvatar, type ResourceAvatarProps } from './ResourceAvatar/ResourceAvatar.js';
export { ResourceBadge, type ResourceBadgeProps } from './ResourceBadge/ResourceBadge.js';
export { ResourceBlame, type ResourceBlameProps } from './ResourceBlame/ResourceBlame.js';
export { ResourceForm, type ResourceFormProps } from './ResourceForm/ResourceForm.js';
export {
  ResourceDiff,
  ResourceHistory,
  useHistory,
  type ResourceHistoryProps,
} from './ResourceHistory/ResourceHistory.js';
export { ResourceTable, type ResourceTableProps } from './ResourceTable/ResourceTable.js';
export { defaultColumns, SearchControl, type SearchControlProps } from './SearchControl/SearchControl.js';
export { Timeline, resourcesToTimeline, type TimelineItem, type TimelineProps } from './Timeline/Timeline.js';
export { VitalsForm, type VitalsFormProps } from './VitalsForm/VitalsForm.js';
export {
  BMI,
  computeBmi,
  VITAL_SIGNS,
  vitalErrors,
  vitalsTransaction,
  type VitalKey,
  type VitalSign,
  type VitalValues,
} from './VitalsForm/vitals.js';
export { blame, diffLines, versionText } from './util/diff.js';
export { formatValue, searchParamValue } from './util/format.js';
export { issuesByPath, normalizeExpression } from './util/outcome.js';
export { humanize, prune } from './util/values.js';
export { DiagnosticReportView, type DiagnosticReportViewProps } from './DiagnosticReportView/DiagnosticReportView.js';
export {
  analyteKey,
  loadReport,
  observationFlag,
  previousResult,
  resultTime,
  type LoadedReport,
} from './DiagnosticReportView/report.js';
export {
  LabOrderActions,
  LabOrderForm,
  type LabOrderActionsProps,
  type LabOrderFormProps,
} from './LabOrderForm/LabOrderForm.js';
export {
  allowedTransitions,
  labOrderTransaction,
  ORDER_TRANSITIONS,
  orderRequisition,
  orderSpecimen,
  requisitionNumber,
  transitionOrder,
  type LabOrderInput,
  type LabOrderStatus,
} from './LabOrderForm/order.js';
export { LabRequisition, type LabRequisitionProps } from './LabRequisition/LabRequisition.js';
export { FlagBadge, flagColor, ResultEntryForm, type ResultEntryFormProps } from './ResultEntryForm/ResultEntryForm.js';
export {
  resultErrors,
  resultRows,
  resultTransaction,
  rowFlag,
  type ResultContext,
  type ResultRow,
} from './ResultEntryForm/results.js';
export { ResultsInbox, type ResultsInboxProps } from './ResultsInbox/ResultsInbox.js';
export { acknowledge, countUnreviewed, inboxQuery, loadInbox, type InboxItem } from './ResultsInbox/inbox.js';
export {
  MedicationList,
  MEDICATION_GROUPS,
  stoppedRequest,
  type MedicationListProps,
} from './MedicationList/MedicationList.js';
export { PrescribeForm, type PrescribeFormProps } from './PrescribeForm/PrescribeForm.js';
export {
  allergyConflicts,
  doseUnitOf,
  draftDosage,
  MEDICATION_ALLERGENS_MAP,
  MEDICATIONS_VALUE_SET,
  prescriptionResource,
  routeOf,
  type AllergyConflict,
  type PrescriptionDraft,
} from './PrescribeForm/prescription.js';
export { CoverageSummary, coverageText, type CoverageSummaryProps } from './CoverageSummary/CoverageSummary.js';
export { CoverageList, type CoverageListProps } from './CoverageList/CoverageList.js';
export { CoverageForm, coverageFromForm, type CoverageFormProps } from './CoverageList/CoverageForm.js';
export { ClaimCard, type ClaimCardProps } from './ClaimCard/ClaimCard.js';
export { ClaimPaymentForm, type ClaimPaymentFormProps } from './ClaimCard/ClaimPaymentForm.js';
export { BalanceBar } from './ClaimCard/BalanceBar.js';
export { ExplanationList, eobAdjustment } from './ClaimCard/ExplanationList.js';
export { EncounterCharges, encounterTitle, type EncounterChargesProps } from './EncounterCharges/EncounterCharges.js';
export {
  balanceOf,
  buildClaim,
  captureCharges,
  claimBalance,
  claimPdf,
  coverageInForce,
  formatMoney,
  primaryCoverage,
  recordClaimResponse,
  saveBlob,
  submitClaim,
  validateClaim,
  type BalanceAnswer,
  type CaptureAnswer,
  type ItemPayment,
  type RecordedResponse,
} from './util/billing.js';
export {
  STATUS_COLORS as TASK_STATUS_COLORS,
  TaskWorklist,
  taskTitle,
  type TaskWorklistProps,
} from './TaskWorklist/TaskWorklist.js';
export {
  cancelledTask,
  claimedTask,
  compareByDue,
  completedTask,
  dueBucket,
  loadTeams,
  loadWorklist,
  matchesDue,
  OPEN_TASK_STATUSES,
  ownedBy,
  startedTask,
  TASK_STATUSES,
  taskActions,
  TaskConflictError,
  taskDue,
  updateTask,
  type DueFilter,
  type Worklist,
  type WorklistItem,
  type WorklistScope,
} from './TaskWorklist/worklist.js';
export { CarePlanView, targetText, type CarePlanViewProps } from './CarePlanView/CarePlanView.js';
export {
  flattenActions,
  loadCarePlan,
  planProgress,
  type LoadedCarePlan,
  type PlanProgress,
  type ProgressRow,
} from './CarePlanView/careplan.js';
export {
  ApplyPlanForm,
  applyPlan,
  CarePlanList,
  type ApplyPlanFormProps,
  type CarePlanListProps,
} from './CarePlanList/CarePlanList.js';
export {
  AdministrationRecord,
  MedicationAdministrationForm,
  type AdministrationRecordProps,
  type MedicationAdministrationFormProps,
} from './MedicationAdministrationForm/MedicationAdministrationForm.js';
export {
  administrationErrors,
  administrationResource,
  draftFor as administrationDraftFor,
  loadAdministrations,
  type AdministrationDraft,
} from './MedicationAdministrationForm/administration.js';
export {
  countUnreadMessages,
  loadThread,
  loadThreads,
  markThreadRead,
  replyRecipients,
  unreadQuery,
  type ThreadSummary,
} from './Messaging/messages.js';
export { inboxCriteria, useMessageStream } from './Messaging/use-message-stream.js';
export { ThreadList, type ThreadListProps } from './Messaging/ThreadList.js';
export { MESSAGES_CHANGED, MessageThread, type MessageThreadProps } from './Messaging/MessageThread.js';
export { MessageComposer, type MessageComposerProps } from './Messaging/MessageComposer.js';
export { NewThreadForm, type NewThreadFormProps } from './Messaging/NewThreadForm.js';
export { CalendarLegend, WeekCalendar, type WeekCalendarProps } from './WeekCalendar/WeekCalendar.js';
export {
  addDays,
  appointmentPatient,
  calendarEvents,
  hourRange,
  placeEvents,
  startOfWeek,
  STATUS_COLORS,
  STATUS_LABELS,
  weekDays,
  weekLabel,
  type CalendarEvent,
  type PlacedEvent,
} from './WeekCalendar/week.js';
export { ScheduleCalendar, type ScheduleCalendarProps } from './ScheduleCalendar/ScheduleCalendar.js';
export {
  AvailabilityForm,
  slotCounts,
  type AvailabilityFormProps,
  type SlotCounts,
} from './AvailabilityForm/AvailabilityForm.js';
export { HoursFields, TimeOffFields } from './AvailabilityForm/AvailabilityFields.js';
export {
  draftAvailability,
  minutesOfTime,
  scheduleDraft,
  timeOffDraft,
  type AvailabilityDraft,
  type HoursDraft,
  type TimeOffDraft,
} from './AvailabilityForm/availability-draft.js';
export { SlotBooking, slotsByDay, type SlotBookingProps } from './SlotBooking/SlotBooking.js';
